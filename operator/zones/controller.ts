// The DNSZone controller: the DNSZones, the GatewayDNS (their status.hostnames:
// who holds which name) and the Namespaces (their labels: a namespaceSelector)
// only enqueue DNSZone names; a work queue runs the reconciles (reconciler.ts).
// The key Secrets the DNSZones name (secret-watches.ts) enqueue the DNSZones
// that name them, only.
// DNSZones are cluster-scoped: with shards (ADR 0207), the replica that serves
// the shard of the empty namespace name reconciles them all.
import type { KubernetesObject, V1ConfigMap, V1Service } from '@kubernetes/client-node';
import { SERVED_SERIALS_KEY, type DNSZone, type GatewayDNS } from '../../api/index.js';
import type { Manager } from '../manager/manager.js';
import type { Runnable } from '../manager/runnable.js';
import type { WatchedResource } from '../manager/runtime/informer.js';
import { errorText } from '../manager/runtime/log.js';
import { WorkQueue } from '../manager/runtime/workqueue.js';
import { DNSZONES, GATEWAYDNS } from './kinds.js';
import { ZoneMetrics } from './metrics.js';
import { DnsZonePatcher } from './patcher.js';
import { ZoneReconciler } from './reconciler.js';
import { ZoneDeclarer } from './declare.js';
import { ZoneKeyReader } from './keys.js';
import { ManagementSecrets } from './secrets.js';
import { SecretWatches } from './secret-watches.js';
import { secretsNamedByAll, zonesNaming } from './key-secrets.js';
import { ServedSerialsReader } from './served-serials.js';
import type { ClusterEvent } from '../manager/clusters/cache.js';

export interface ZoneControllerOptions {
  /** The zones the flags declare (--domain-suffix, --zone). */
  flagZones: readonly string[];
  requestTimeoutMs?: number;
  firstSyncTimeoutMs?: number;
  /** Where the keys of signed DNSZones that name none are generated (ADR 0106): the operator's namespace. */
  keyNamespace?: string;
}

/** DNSZones are not per team: one replica reconciles them, the one serving this (empty) namespace name. */
const ZONES_SHARD_KEY = '';

export class ZoneController implements Runnable {
  readonly name = 'dnszone';
  private readonly queue: WorkQueue<string>;
  private readonly zones: WatchedResource<DNSZone & KubernetesObject>;
  private readonly gatewayDns: WatchedResource<GatewayDNS & KubernetesObject>;
  /** What of each object concerns the zones, as last seen: an update that changes none of it enqueues nothing. */
  private readonly seen = new Map<string, string>();
  private readonly declarer: ZoneDeclarer;
  private readonly keySecrets: SecretWatches;
  private readonly keyNamespace: string;
  /** Between start and stop: the Secret watches open only then. */
  private running = false;

  constructor(
    private readonly mgr: Manager,
    opts: ZoneControllerOptions,
  ) {
    this.zones = mgr.cache.informer(DNSZONES);
    this.gatewayDns = mgr.cache.informer(GATEWAYDNS);
    const zones = this.zones;
    const gatewayDns = this.gatewayDns;
    this.declarer = new ZoneDeclarer({
      clusters: mgr.clusters,
      writer: mgr.writer,
      recordsNamespace: mgr.recordsNamespace,
      listClusters: () =>
        mgr.provider
          .list()
          .map((c) => ({ namespace: c.metadata?.namespace ?? '', name: c.metadata?.name ?? '' })),
      firstSyncTimeoutMs: opts.firstSyncTimeoutMs ?? 5_000,
      log: mgr.log,
    });
    const requestTimeoutMs = opts.requestTimeoutMs ?? 10_000;
    const secrets = new ManagementSecrets(mgr.management, requestTimeoutMs);
    this.keyNamespace = opts.keyNamespace ?? 'capi-dns-system';
    this.keySecrets = new SecretWatches({
      kc: mgr.management,
      log: mgr.log,
      onChange: (secret) => {
        for (const name of zonesNaming(zones.list(), secret, this.keyNamespace)) this.queue.add(name);
      },
    });
    const serials = new ServedSerialsReader({
      clusters: mgr.clusters,
      recordsNamespace: mgr.recordsNamespace,
      firstSyncTimeoutMs: opts.firstSyncTimeoutMs ?? 5_000,
      log: mgr.log,
    });
    const reconciler = new ZoneReconciler({
      declarer: this.declarer,
      servedSerials: (clusters) => serials.read(clusters),
      keys: new ZoneKeyReader({ secrets, namespace: this.keyNamespace, log: mgr.log }),
      watched: (secret) => this.keySecrets.watched(secret),
      readSecret: (namespace, name) => secrets.data(namespace, name),
      getZone: (name) => zones.get(name),
      listZones: () => zones.list(),
      served: () =>
        gatewayDns
          .list()
          .filter((gw) => gw.status?.hostnames?.length)
          .map((gw) => ({
            gatewayDns: `${gw.metadata?.namespace}/${gw.metadata?.name}`,
            namespace: gw.metadata?.namespace ?? '',
            hostnames: gw.status?.hostnames ?? [],
          })),
      namespaceLabels: (namespace) => mgr.cache.namespaces.get(namespace)?.metadata?.labels,
      flagZones: opts.flagZones,
      patcher: new DnsZonePatcher(mgr.management, requestTimeoutMs),
      metrics: new ZoneMetrics(mgr.metrics.registry, () => this.keySecrets.unwatched()),
      log: mgr.log,
    });
    this.queue = new WorkQueue<string>(
      async (name) => (mgr.share.owns(ZONES_SHARD_KEY) ? reconciler.reconcile(name) : undefined),
      {
        concurrency: 1,
        metrics: mgr.metrics.controller(this.name, 1),
        baseDelayMs: 200,
        maxDelayMs: 30_000,
        onError: (name, err, retryInMs) =>
          mgr.log.warn('reconcile failed', { dnszone: name, error: errorText(err), retryInMs }),
      },
    );
    this.watch();
  }

  start(): void {
    this.queue.start();
    this.running = true;
    this.watchKeySecrets();
    this.enqueueAll();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.queue.shutdown();
    await this.keySecrets.stop();
  }

  /** The Secrets the DNSZones name now, watched by the replica that reconciles them; no others. */
  private watchKeySecrets(): void {
    if (!this.running) return;
    const named = this.mgr.share.owns(ZONES_SHARD_KEY)
      ? secretsNamedByAll(this.zones.list(), this.keyNamespace)
      : new Map();
    this.keySecrets.watchOnly(named);
  }

  private watch(): void {
    // Another zone's delegations in force, or its deletion, change which zone governs a name.
    this.zones.onChange((type, zone) => {
      this.watchKeySecrets();
      if (
        this.changed(`zone|${zone.metadata?.name}`, type, [
          zone.metadata?.generation,
          zone.metadata?.deletionTimestamp,
          zone.metadata?.finalizers,
          zone.status?.enforced,
        ])
      )
        this.enqueueAll();
    });
    this.gatewayDns.onChange((type, gw) => {
      if (
        this.changed(
          `gatewaydns|${gw.metadata?.namespace}/${gw.metadata?.name}`,
          type,
          gw.status?.hostnames ?? [],
        )
      )
        this.enqueueAll();
    });
    this.mgr.cache.namespaces.onChange((type, namespace) => {
      if (this.changed(`namespace|${namespace.metadata?.name}`, type, namespace.metadata?.labels ?? {}))
        this.enqueueAll();
    });
    this.mgr.share.onChange(() => {
      this.watchKeySecrets();
      this.enqueueAll();
    });
    // A new workload cluster is told the zones; one that comes back after a failed pass too.
    this.mgr.provider.onChange((type) => {
      if (type === 'add' && this.zones.list().length) this.enqueueAll();
    });
    this.mgr.clusters.onEvent((event) => this.onClusterEvent(event));
  }

  private onClusterEvent(event: ClusterEvent): void {
    if (!this.zones.list().length) return;
    if (event.type === 'reachable' && this.declarer.failing.has(event.cluster)) return this.enqueueAll();
    // A cluster unreachable (or back) leaves (or rejoins) the NS set of the zones that expose (ADR 0215).
    if ((event.type === 'reachable' || event.type === 'unreachable') && this.exposing()) {
      const key = `health|${event.cluster}`;
      if (this.changed(key, 'update', event.type)) this.enqueueAll();
      return;
    }
    if (event.type !== 'change') return;
    const { kind, object } = event.change;
    // The exposed dns-server's Service: its load-balancer addresses are glue.
    if (kind === 'ExposedDnsServer') {
      const what = [event.change.type, (object as V1Service).status?.loadBalancer?.ingress ?? []];
      if (this.changed(`exposed|${event.cluster}`, 'update', what)) this.enqueueAll();
      return;
    }
    // A dns-server replica serving a new serial (or gone): status.nameservers[].serial.
    if (kind === 'ServedSerials') {
      const what = (object as V1ConfigMap).data?.[SERVED_SERIALS_KEY];
      const id = `serials|${event.cluster}|${object.metadata?.name}`;
      if (this.exposing() && this.changed(id, event.change.type, what)) this.enqueueAll();
      return;
    }
    // The records namespace appearing (a dns-server installed), or someone changing our ConfigMap.
    if (kind === 'Namespace' && object.metadata?.name === this.mgr.recordsNamespace) return this.enqueueAll();
    if (
      (kind === 'ZoneDeclaration' &&
        !this.mgr.writer.isOwnEcho(event.cluster, 'ConfigMap', event.change.type, object)) ||
      ((kind === 'DnssecKeys' || kind === 'TsigKeySecret') &&
        !this.mgr.writer.isOwnEcho(event.cluster, 'Secret', event.change.type, object))
    )
      this.enqueueAll();
  }

  private exposing(): boolean {
    return this.zones.list().some((z) => z.status?.enforced?.expose);
  }

  private changed(id: string, type: string, what: unknown): boolean {
    const signature = type === 'delete' ? undefined : JSON.stringify(what);
    if (type !== 'delete' && this.seen.get(id) === signature) return false;
    if (signature === undefined) this.seen.delete(id);
    else this.seen.set(id, signature);
    return true;
  }

  private enqueueAll(): void {
    for (const zone of this.zones.list()) this.queue.add(zone.metadata?.name ?? '');
  }
}
