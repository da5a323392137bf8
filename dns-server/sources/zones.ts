// Kubernetes mode: the zones declared once on the management cluster
// (DNSZone), as the operator tells them in the ConfigMap capi-dns-zones of this
// server's namespace (api/zone-declaration.ts; ADR 0213). Watched by name, with
// the informer policy of the other Kubernetes sources (watch.ts); no ConfigMap
// means no declared zone. The store is handed the zones to serve: the flags'
// first, then the declared ones (zone/declared.ts). A declaration that is not
// one is logged and counted, and the zones served before stay.
import {
  CoreV1Api,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type V1ConfigMap,
} from '@kubernetes/client-node';
import {
  ZONES_CONFIGMAP,
  ZONES_CONFIGMAP_KEY,
  ZoneDeclarationError,
  parseZoneDeclaration,
  type DeclaredZone,
} from '../../api/index.js';
import type { Logger } from '../../runtime/log.js';
import { listWatch, RestartingInformer } from '../../runtime/restarting-informer.js';
import type { ZoneConfig } from '../zone/compile.js';
import { servedZones, type ZoneDefaults } from '../zone/declared.js';
import { freshInformerPolicy, reportWatchFailure } from './watch.js';

export interface ZoneDeclarationSourceOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  resyncMs: number;
  backoffMinMs: number;
  backoffMaxMs: number;
  /** The zones of the flags (--zone, the clusterset zone): they win over a declared one. */
  flagZones: readonly ZoneConfig[];
  /** What a declared zone gets where it says nothing (--soa-*, --ns). */
  defaults: ZoneDefaults;
  /** The zones to serve now, every time the declaration changes. */
  onZones: (zones: ZoneConfig[]) => void;
  /** The declaration as parsed (its signed zones name their keys), every time it changes. */
  onDeclared?: (zones: DeclaredZone[]) => void;
  onError: (source: string) => void;
  log: Logger;
}

export class ZoneDeclarationSource {
  readonly name: string;
  private readonly informer: RestartingInformer<V1ConfigMap & KubernetesObject>;
  private last = '';
  private declared: DeclaredZone[] | undefined;
  /** The TSIG key names of the zones declared with transfer, once read (tsig-keys.ts). */
  private keyNames: ReadonlyMap<string, string> = new Map();

  constructor(private readonly opts: ZoneDeclarationSourceOptions) {
    const { namespace } = opts;
    this.name = `zones:${namespace}/${ZONES_CONFIGMAP}`;
    const core = opts.kubeConfig.makeApiClient(CoreV1Api);
    const fieldSelector = `metadata.name=${ZONES_CONFIGMAP}`;
    this.informer = new RestartingInformer<V1ConfigMap & KubernetesObject>({
      make: () =>
        listWatch({
          kc: opts.kubeConfig,
          path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps`,
          fieldSelector,
          list: () =>
            core.listNamespacedConfigMap({ namespace, fieldSelector }) as Promise<
              KubernetesListObject<V1ConfigMap & KubernetesObject>
            >,
        }),
      ...freshInformerPolicy(opts),
    });
    this.informer.onChange(() => this.deliver());
    this.informer.onSynced(() => this.deliver());
    this.informer.onFailure(
      reportWatchFailure(
        opts,
        this.name,
        'zone declaration watch failed; serving the zones as they are, retrying',
      ),
    );
  }

  start(): void {
    this.informer.start();
  }

  stop(): void {
    void this.informer.stop();
  }

  /** The declared transfers' keys read anew: the zones are handed over again with them. */
  setKeyNames(keyNames: ReadonlyMap<string, string>): void {
    this.keyNames = keyNames;
    if (this.declared) this.opts.onZones(this.served(this.declared));
  }

  private served(zones: DeclaredZone[]) {
    const served = servedZones(this.opts.flagZones, zones, this.opts.defaults, this.keyNames);
    return served.zones;
  }

  private deliver(): void {
    const text = this.informer.get(ZONES_CONFIGMAP, this.opts.namespace)?.data?.[ZONES_CONFIGMAP_KEY] ?? '';
    if (text === this.last) return;
    let zones: DeclaredZone[];
    try {
      zones = text ? parseZoneDeclaration(text) : [];
    } catch (err) {
      if (!(err instanceof ZoneDeclarationError)) throw err;
      this.opts.onError(this.name);
      this.opts.log.error('zone declaration refused; serving the zones as they were', {
        source: this.name,
        error: err.message,
      });
      return;
    }
    this.last = text;
    this.declared = zones;
    const served = servedZones(this.opts.flagZones, zones, this.opts.defaults, this.keyNames);
    if (served.ignored.length)
      this.opts.log.warn('declared zones left out: a --zone serves them or overlaps them', {
        source: this.name,
        zones: served.ignored,
      });
    this.opts.log.info('zones declared', { source: this.name, zones: zones.map((z) => z.name) });
    this.opts.onZones(served.zones);
    this.opts.onDeclared?.(zones);
  }
}
