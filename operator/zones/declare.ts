// Zones declared once: the zones in force are told to every workload cluster's
// dns-server through one ConfigMap in its records namespace (capi-dns-zones,
// api/zone-declaration.ts; ADR 0213), compared with the watched copy and
// written through the manager's one writer only where it differs. A cluster
// without the records namespace runs no dns-server and is skipped. The keys of
// the signed zones go beside it, in the one Secret capi-dns-dnssec-keys (ADR
// 0106), and the TSIG keys of the zones with transfer in capi-dns-tsig-keys (ADR
// 0216), both written first so that a dns-server finds a key its declaration names.
import type { KubernetesObject, V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import {
  CONTROLLER_NAME,
  DNSSEC_KEYS_SECRET,
  EXPOSED_DNS_SERVICE,
  TSIG_KEYS_SECRET,
  ZONES_CONFIGMAP,
  ZONES_CONFIGMAP_KEY,
  ZONES_CONFIGMAP_LABEL,
  zoneDeclarationText,
  type DeclaredZone,
} from '../../api/index.js';
import type { ClusterCache } from '../manager/clusters/cache.js';
import { NAMESPACES } from '../manager/clusters/kinds.js';
import type { OwnedObjectWriter } from '../manager/clusters/owned-writer.js';
import type { RemoteCluster } from '../manager/clusters/remote.js';
import type { ResourceType } from '../manager/clusters/resource.js';
import { errorText, type Logger } from '../manager/runtime/log.js';
import { DNSSEC_KEY_SECRETS, EXPOSED_DNS_SERVERS, TSIG_KEY_SECRETS, ZONE_DECLARATIONS } from './kinds.js';
import type { ExposedServer } from './nameservers.js';

export interface DeclarerOptions {
  clusters: ClusterCache;
  writer: OwnedObjectWriter;
  recordsNamespace: string;
  /** Every workload cluster of the fleet, by management namespace and name. */
  listClusters: () => { namespace: string; name: string }[];
  firstSyncTimeoutMs: number;
  log: Logger;
}

/** A Secret of keys the declared zones name, copied into each workload cluster's records namespace. */
interface KeySecret {
  name: string;
  watch: ResourceType<V1Secret & KubernetesObject>;
  /** In logs: "DNSSEC keys written". */
  what: string;
  /** The data key of a zone's key; undefined for a zone without one. */
  dataKeyOf: (zone: DeclaredZone) => string | undefined;
}

/** The signed zones' keys (ADR 0106), by the data key the declaration names. */
const DNSSEC_KEYS: KeySecret = {
  name: DNSSEC_KEYS_SECRET,
  watch: DNSSEC_KEY_SECRETS,
  what: 'DNSSEC keys',
  dataKeyOf: (z) => z.dnssec?.key,
};
/** The TSIG keys of the zones with transfer (ADR 0216), by the zone's name. */
const TSIG_KEYS: KeySecret = {
  name: TSIG_KEYS_SECRET,
  watch: TSIG_KEY_SECRETS,
  what: 'TSIG keys',
  dataKeyOf: (z) => (z.transfer ? z.name : undefined),
};

/** Per workload cluster ("namespace/name"): the zones its dns-server is told now, or why it could not be told. */
export type Declarations = Map<string, { declared: string[] } | { error: string }>;

/**
 * The PEM of each signed zone's key by its data key in capi-dns-dnssec-keys; undefined: the key
 * could not be read on the management cluster, and each cluster keeps the one it holds.
 */
export type DeclaredKeys = ReadonlyMap<string, string | undefined>;

export class ZoneDeclarer {
  /** The clusters the last pass could not tell: their coming back is worth a pass. */
  readonly failing = new Set<string>();
  /** "<Secret> <cluster>" given keys since the start: the Secret is removed once no zone wants a key. */
  private readonly keyed = new Set<string>();

  constructor(private readonly opts: DeclarerOptions) {}

  /**
   * @param zonesFor the zones the clusters of a management namespace are told (the zones in force,
   *   and the namespace parts delegated to it, ADR 0215)
   * @param tsigKeys the TSIG key of each zone with transfer, by zone name (ADR 0216); a zone with
   *   transfer but no key here keeps the key its cluster has
   */
  async declare(
    zonesFor: (namespace: string) => readonly DeclaredZone[],
    keys: DeclaredKeys = new Map(),
    tsigKeys: ReadonlyMap<string, string> = new Map(),
  ): Promise<Declarations> {
    const out: Declarations = new Map();
    await Promise.all(
      this.opts.listClusters().map(async ({ namespace, name }) => {
        const key = `${namespace}/${name}`;
        const zones = zonesFor(namespace);
        try {
          const remote = await this.ready(namespace, name, keys.size > 0);
          if (remote === 'skipped') return;
          await this.syncKeySecret(remote, DNSSEC_KEYS, zones, keys, keys.size > 0);
          await this.syncKeySecret(remote, TSIG_KEYS, zones, tsigKeys, true);
          await this.sync(remote, zones.length ? zoneDeclarationText(zones) : undefined);
          out.set(key, { declared: zones.map((z) => z.name) });
          this.failing.delete(key);
        } catch (err) {
          out.set(key, { error: errorText(err) });
          this.failing.add(key);
        }
      }),
    );
    return out;
  }

  /**
   * Every workload cluster's exposed dns-server as the watches show it now (ADR 0215): the IP
   * addresses of its Service's load-balancer ingress, or none when the Service is gone, has no
   * address yet, or the cluster is unreachable (its watched copy may be stale: it is not trusted).
   * Asked only while some zone has spec.nameservers.expose, so that no other installation gets
   * the watch.
   */
  async exposedServers(): Promise<ExposedServer[]> {
    return Promise.all(
      this.opts.listClusters().map(async ({ namespace, name }): Promise<ExposedServer> => {
        const none = { namespace, name, addresses: [] };
        const remote = this.opts.clusters.get(namespace, name);
        if (!remote || remote.healthy === false) return none;
        const ns = this.opts.recordsNamespace;
        const services = remote.informer(EXPOSED_DNS_SERVERS, ns);
        // synced() also says so when the cluster turned unreachable meanwhile.
        if (await remote.synced([services], this.opts.firstSyncTimeoutMs)) return none;
        const ingress = services.get(EXPOSED_DNS_SERVICE, ns)?.status?.loadBalancer?.ingress ?? [];
        return { namespace, name, addresses: ingress.flatMap((i) => (i.ip ? [i.ip] : [])) };
      }),
    );
  }

  /** No zone declared: no ConfigMap (a flags-only installation gets no object it did not ask for). */
  private async sync(remote: RemoteCluster, text: string | undefined): Promise<void> {
    const ns = this.opts.recordsNamespace;
    const existing = remote.informer(ZONE_DECLARATIONS, ns).get(ZONES_CONFIGMAP, ns);
    if (text === undefined) {
      if (await this.removeOurs(remote, 'ConfigMap', ZONES_CONFIGMAP, existing))
        this.opts.log.info('zone declaration removed', { cluster: remote.key });
      return;
    }
    const object: V1ConfigMap & KubernetesObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: ours(ZONES_CONFIGMAP, ns),
      data: { [ZONES_CONFIGMAP_KEY]: text },
    };
    const { changed } = await this.opts.writer.ensure(remote, existing, {
      object,
      content: text,
      contentOf: (cm: V1ConfigMap) => cm.data?.[ZONES_CONFIGMAP_KEY] ?? '',
    });
    if (changed) this.opts.log.info('zone declaration written', { cluster: remote.key });
  }

  /**
   * A Secret of the zones' keys: the ones read now, the ones that could not be read as the cluster
   * holds them (its dns-server goes on with those). No key: no Secret, and ours is removed.
   * @param keys each key's text by its data key; undefined (or none): it could not be read now
   * @param watched the Secret is watched (TSIG: ready() syncs it; DNSSEC: while some zone of the
   *   fleet is signed); else only while a zone of this cluster wants a key or we wrote it
   */
  private async syncKeySecret(
    remote: RemoteCluster,
    secret: KeySecret,
    zones: readonly DeclaredZone[],
    keys: ReadonlyMap<string, string | undefined>,
    watched: boolean,
  ): Promise<void> {
    const ns = this.opts.recordsNamespace;
    const wanted = zones.flatMap((z) => secret.dataKeyOf(z) ?? []);
    const keyed = `${secret.name} ${remote.key}`;
    const informer =
      wanted.length || watched || this.keyed.has(keyed) ? remote.informer(secret.watch, ns) : undefined;
    if (informer) {
      const why = await remote.synced([informer], this.opts.firstSyncTimeoutMs);
      if (why) throw new Error(why);
    }
    const existing = informer?.get(secret.name, ns);
    const held = existing?.data ?? {};
    const data: Record<string, string> = {};
    for (const key of wanted) {
      const text = keys.get(key);
      const value = text !== undefined ? Buffer.from(text).toString('base64') : held[key];
      if (value !== undefined) data[key] = value;
    }
    if (!Object.keys(data).length) {
      if (await this.removeOurs(remote, 'Secret', secret.name, existing))
        this.opts.log.info(`${secret.what} removed`, { cluster: remote.key });
      this.keyed.delete(keyed);
      return;
    }
    this.keyed.add(keyed);
    const contentOf = (s: V1Secret) =>
      JSON.stringify(Object.entries(s.data ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    const object: V1Secret & KubernetesObject = {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: ours(secret.name, ns),
      data,
    };
    const { changed } = await this.opts.writer.ensure(remote, existing, {
      object,
      content: contentOf(object),
      contentOf,
    });
    if (changed)
      this.opts.log.info(`${secret.what} written`, { cluster: remote.key, zones: Object.keys(data) });
  }

  /** Our object (labelled ours: another's is left alone) deleted under its UID; false when none was. */
  private async removeOurs(
    remote: RemoteCluster,
    kind: 'ConfigMap' | 'Secret',
    name: string,
    existing: KubernetesObject | undefined,
  ): Promise<boolean> {
    const meta = existing?.metadata;
    if (meta?.labels?.[ZONES_CONFIGMAP_LABEL] === undefined) return false;
    const namespace = this.opts.recordsNamespace;
    return this.opts.writer.delete(remote, { apiVersion: 'v1', kind, namespace, name, uid: meta.uid });
  }

  /** The cluster's client with the watches synced; skipped without a records namespace; throws when unreachable. */
  private async ready(
    namespace: string,
    cluster: string,
    signed = false,
  ): Promise<RemoteCluster | 'skipped'> {
    const { clusters } = this.opts;
    const remote = clusters.get(namespace, cluster);
    if (!remote && clusters.waiting(namespace, cluster)) return 'skipped';
    if (!remote) throw new Error(clusters.problem(namespace, cluster) ?? 'no client');
    const namespaces = remote.informer(NAMESPACES);
    const why = await remote.synced([namespaces], this.opts.firstSyncTimeoutMs);
    if (why) throw new Error(why);
    if (!namespaces.get(this.opts.recordsNamespace)) return 'skipped';
    const declarations = remote.informer(ZONE_DECLARATIONS, this.opts.recordsNamespace);
    const secrets = [
      remote.informer(TSIG_KEY_SECRETS, this.opts.recordsNamespace),
      ...(signed ? [remote.informer(DNSSEC_KEY_SECRETS, this.opts.recordsNamespace)] : []),
    ];
    const declarationsWhy = await remote.synced([declarations, ...secrets], this.opts.firstSyncTimeoutMs);
    if (declarationsWhy) throw new Error(declarationsWhy);
    return remote;
  }
}

/** The metadata of what the declarer writes: the label says it is ours to replace or remove. */
function ours(name: string, namespace: string) {
  return {
    name,
    namespace,
    labels: { [ZONES_CONFIGMAP_LABEL]: 'true', 'app.kubernetes.io/managed-by': CONTROLLER_NAME },
  };
}
