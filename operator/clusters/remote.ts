// One workload cluster as the operator sees it: a client built from its
// kubeconfig, and watched caches of what the operator reads there (Services
// of a namespace, Nodes, Namespaces, our DNSRecordSets), each started on
// first use. It is the one owner of the cluster's reachability: unreachable
// as soon as any of its watches finds the API server not answering,
// reachable when none does; readers ask it, not one particular watch. While
// it is unreachable a readiness probe asks the API server once a second, and
// restarts the watches the moment it answers.
import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  KubernetesObjectApi,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type V1ConfigMap,
  type V1EndpointSlice,
  type V1Namespace,
  type V1Node,
  type V1Service,
} from '@kubernetes/client-node';
import {
  DNSRECORDSET_PLURAL,
  ENDPOINTSLICE_MANAGED_BY_LABEL,
  ABOUT_GROUP,
  ABOUT_VERSION,
  CLUSTERPROPERTY_PLURAL,
  GROUP,
  MANAGED_BY_LABEL,
  MCS_CONTROLLER,
  MCS_GROUP,
  MCS_SERVICE_NAME_LABEL,
  MCS_VERSION,
  MIRROR_CONTROLLER,
  PROBE_REPORT_LABEL,
  SERVICEEXPORT_PLURAL,
  SERVICEIMPORT_PLURAL,
  CONTROLLER_NAME,
  VERSION,
} from '../../api/index.js';
import { SERVICE_NAME_LABEL, type DNSRecordSet } from '../../api/index.js';
import { WatchedResource, type ChangeType } from '../runtime/informer.js';
import {
  GATEWAY_API_GROUP,
  ROUTE_KINDS,
  type GatewayObject,
  type RouteKind,
  type RouteObject,
} from '../model/gateway-api.js';
import { WriteGate } from '../runtime/write-gate.js';
import { ReadinessProbe, probeReadyz } from './probe.js';

export type RemoteKind =
  | 'Service'
  | 'Node'
  | 'Namespace'
  | 'DNSRecordSet'
  | 'ConfigMap'
  /** The dns-servers' probe reports (ConfigMaps of the records namespace, by label). */
  | 'ProbeReport'
  | 'EndpointSlice'
  /** The EndpointSlices of our mirrors (spec.mirror), watched apart from the sources' slices. */
  | 'MirrorEndpointSlice'
  /** Multi-Cluster Services (operator/mcs/): every ServiceExport of the cluster. */
  | 'ServiceExport'
  /** Our ServiceImports, derived Services and MCS EndpointSlices (cluster-wide, by our labels). */
  | 'ServiceImport'
  | 'DerivedService'
  | 'McsEndpointSlice'
  /** KEP-2149's ClusterProperty objects (the cluster's id and ClusterSet). */
  | 'ClusterProperty'
  /** Gateway API (spec.gatewayRef): every Gateway, and every route of each kind, of the cluster. */
  | 'Gateway'
  | RouteKind;

/** The watches started per namespace on a GatewayDNS's behalf, and stopped when none needs them. */
export type ReleasableKind = Extract<RemoteKind, 'Service' | 'EndpointSlice' | 'MirrorEndpointSlice'>;

export interface RemoteChange {
  kind: RemoteKind;
  type: ChangeType;
  object: KubernetesObject;
}

export interface RemoteClusterOptions {
  /** "namespace/name" of the Cluster in the management cluster. */
  key: string;
  kc: KubeConfig;
  recordsNamespace: string;
  relistMs?: number;
  onChange: (change: RemoteChange) => void;
  /**
   * A watch of the cluster failed or recovered. Called for every such change,
   * not only when the cluster as a whole flips (changed): a reader that ran
   * between the first and the last watch to notice must be asked again.
   */
  onHealth: (health: ClusterHealth) => void;
  /** How often the readiness probe asks an unreachable cluster's API server (default 1 s, jittered). */
  probeIntervalMs?: number;
  /** The probe's own timeout (default 1 s). */
  probeTimeoutMs?: number;
  /** Where the operator's writes to every cluster queue (default: one of this cluster's own, unlimited). */
  writeGate?: WriteGate;
  /**
   * Why this replica may not write to the cluster now (its namespace's shard is not held), or
   * undefined: asked as each write starts, not when it is queued, so a write queued before a shard
   * was lost never reaches the cluster (ADR 0207's fence).
   */
  fence?: () => string | undefined;
}

/** A gate that lets every request through at once: a RemoteCluster made without one (tests). */
const UNLIMITED: WriteGate = new WriteGate({
  maxInFlight: Infinity,
  maxInFlightPerCluster: Infinity,
  qps: 0,
  burst: 0,
});

export interface ClusterHealth {
  healthy: boolean;
  /** The cluster as a whole flipped between reachable and unreachable with this change. */
  changed: boolean;
  error?: string;
  /** The watch whose health changed. */
  watch: { path: string; healthy: boolean; error?: string; status?: number };
}

/**
 * Whether a watch's failure means the API server does not serve at all: no
 * answer (refused, reset, timed out) or an answer that it cannot serve now
 * (429 while its storage initialises, 5xx). A 403 or 404 is about one
 * resource (RBAC, a CRD not installed): the cluster is reachable, and only
 * the readers of that watch see its error.
 */
export function notAnswering(status: number | undefined): boolean {
  return status === undefined || status === 429 || status >= 500;
}

function failsToReach(w: WatchedResource<KubernetesObject>): boolean {
  return w.tried && !w.healthy && notAnswering(w.lastErrorStatus);
}

export class RemoteCluster {
  readonly kc: KubeConfig;
  readonly objects: KubernetesObjectApi;
  readonly core: CoreV1Api;
  readonly discovery: DiscoveryV1Api;
  private readonly custom: CustomObjectsApi;
  private readonly endpointSlices = new Map<string, WatchedResource<V1EndpointSlice>>();
  private readonly mirrorSlices = new Map<string, WatchedResource<V1EndpointSlice>>();
  private readonly services = new Map<string, WatchedResource<V1Service>>();
  private readonly configMaps = new Map<string, WatchedResource<V1ConfigMap>>();
  private nodeWatch?: WatchedResource<V1Node>;
  private namespaceWatch?: WatchedResource<V1Namespace>;
  private recordSetWatch?: WatchedResource<DNSRecordSet & KubernetesObject>;
  private probeReportWatch?: WatchedResource<V1ConfigMap>;
  private readonly mcsWatches = new Map<RemoteKind, WatchedResource<KubernetesObject>>();
  private wasHealthy: boolean | undefined;
  private readonly probe: ReadinessProbe;
  private stopped = false;

  constructor(private readonly opts: RemoteClusterOptions) {
    this.kc = opts.kc;
    this.objects = KubernetesObjectApi.makeApiClient(opts.kc);
    this.core = opts.kc.makeApiClient(CoreV1Api);
    this.custom = opts.kc.makeApiClient(CustomObjectsApi);
    this.discovery = opts.kc.makeApiClient(DiscoveryV1Api);
    this.probe = new ReadinessProbe({
      probe: () => probeReadyz(opts.kc, opts.probeTimeoutMs ?? 1_000),
      onReady: () => this.all().forEach((w) => w.retryNow()),
      intervalMs: opts.probeIntervalMs,
    });
  }

  /**
   * A write (apply, delete) to this cluster, started when the operator's write gate allows and
   * given `timeoutMs` from then: every write to a workload cluster goes through here.
   */
  write<T>(what: string, timeoutMs: number, request: () => Promise<T>): Promise<T> {
    const fence = this.opts.fence;
    const fenced = fence
      ? () => {
          const refused = fence();
          return refused
            ? Promise.reject(new Error(`${what} in cluster ${this.opts.key} not sent: ${refused}`))
            : request();
        }
      : request;
    return (this.opts.writeGate ?? UNLIMITED).run(this.opts.key, what, timeoutMs, fenced);
  }

  get key(): string {
    return this.opts.key;
  }

  /** Services of one namespace (the GatewayDNS's spec.service names a namespace), started on first use and stopped by release. */
  servicesIn(namespace: string): WatchedResource<V1Service> {
    let w = this.services.get(namespace);
    if (!w) {
      w = this.watch('Service', `/api/v1/namespaces/${namespace}/services`, () =>
        this.core.listNamespacedService({ namespace }),
      );
      this.services.set(namespace, w);
    }
    return w;
  }

  /**
   * EndpointSlices of one namespace, started on first use and stopped by
   * release: a namespace of a large cluster has many, so the watch
   * lives only while some GatewayDNS needs it.
   */
  endpointSlicesIn(namespace: string): WatchedResource<V1EndpointSlice> {
    let w = this.endpointSlices.get(namespace);
    if (!w) {
      w = this.watch(
        'EndpointSlice',
        `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`,
        () => this.discovery.listNamespacedEndpointSlice({ namespace, labelSelector: SERVICE_NAME_LABEL }),
        SERVICE_NAME_LABEL,
      );
      this.endpointSlices.set(namespace, w);
    }
    return w;
  }

  /**
   * The EndpointSlices our mirrors keep in one namespace (selected by our
   * endpointslice.kubernetes.io/managed-by value): a watch of its own, so
   * that releasing the sources' slice watch never blinds the mirror writer.
   */
  mirrorSlicesIn(namespace: string): WatchedResource<V1EndpointSlice> {
    let w = this.mirrorSlices.get(namespace);
    if (!w) {
      const labelSelector = `${ENDPOINTSLICE_MANAGED_BY_LABEL}=${MIRROR_CONTROLLER}`;
      w = this.watch(
        'MirrorEndpointSlice',
        `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`,
        () => this.discovery.listNamespacedEndpointSlice({ namespace, labelSelector }),
        labelSelector,
      );
      this.mirrorSlices.set(namespace, w);
    }
    return w;
  }

  /**
   * Stops the watch of one namespace that no GatewayDNS needs any more; the
   * next use starts it again. The Services of the records namespace stay:
   * the Corefile reconciler reads them in every cluster, whatever is selected.
   */
  release(kind: ReleasableKind, namespace: string): 'released' | 'kept' {
    if (kind === 'Service' && namespace === this.opts.recordsNamespace) return 'kept';
    const watches = this.perNamespace(kind);
    const w = watches.get(namespace);
    if (!w) return 'released';
    watches.delete(namespace);
    void w.stop();
    return 'released';
  }

  private perNamespace(kind: ReleasableKind): Map<string, { stop(): Promise<void> }> {
    if (kind === 'Service') return this.services;
    return kind === 'EndpointSlice' ? this.endpointSlices : this.mirrorSlices;
  }

  /** One ConfigMap (kube-system/coredns, for CoreDNS's Corefile), watched alone. */
  configMap(namespace: string, name: string): WatchedResource<V1ConfigMap> {
    const key = `${namespace}/${name}`;
    let w = this.configMaps.get(key);
    if (!w) {
      const fieldSelector = `metadata.name=${name}`;
      w = this.watch(
        'ConfigMap',
        `/api/v1/namespaces/${namespace}/configmaps`,
        () => this.core.listNamespacedConfigMap({ namespace, fieldSelector }),
        undefined,
        fieldSelector,
      );
      this.configMaps.set(key, w);
    }
    return w;
  }

  nodes(): WatchedResource<V1Node> {
    this.nodeWatch ??= this.watch('Node', '/api/v1/nodes', () => this.core.listNode());
    return this.nodeWatch;
  }

  namespaces(): WatchedResource<V1Namespace> {
    this.namespaceWatch ??= this.watch('Namespace', '/api/v1/namespaces', () => this.core.listNamespace());
    return this.namespaceWatch;
  }

  /** The DNSRecordSets this operator manages in the records namespace. */
  recordSets(): WatchedResource<DNSRecordSet & KubernetesObject> {
    const namespace = this.opts.recordsNamespace;
    const labelSelector = `${MANAGED_BY_LABEL}=${CONTROLLER_NAME}`;
    this.recordSetWatch ??= this.watch(
      'DNSRecordSet',
      `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${DNSRECORDSET_PLURAL}`,
      () =>
        this.custom.listNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          namespace,
          plural: DNSRECORDSET_PLURAL,
          labelSelector,
        }) as Promise<KubernetesListObject<DNSRecordSet & KubernetesObject>>,
      labelSelector,
    );
    return this.recordSetWatch;
  }

  /**
   * The dns-servers' probe reports in the records namespace: started by the first GatewayDNS with
   * a health check, kept while the client lives (one small list per cluster).
   */
  probeReports(): WatchedResource<V1ConfigMap> {
    const namespace = this.opts.recordsNamespace;
    this.probeReportWatch ??= this.watch(
      'ProbeReport',
      `/api/v1/namespaces/${namespace}/configmaps`,
      () => this.core.listNamespacedConfigMap({ namespace, labelSelector: PROBE_REPORT_LABEL }),
      PROBE_REPORT_LABEL,
    );
    return this.probeReportWatch;
  }

  /** Every ServiceExport of the cluster (Multi-Cluster Services: only member clusters of a ClusterSet). */
  serviceExports(): WatchedResource<KubernetesObject> {
    return this.customClusterWide('ServiceExport', MCS_GROUP, MCS_VERSION, SERVICEEXPORT_PLURAL);
  }

  /** The ServiceImports we keep (our managed-by label), all namespaces. */
  serviceImports(): WatchedResource<KubernetesObject> {
    return this.customClusterWide(
      'ServiceImport',
      MCS_GROUP,
      MCS_VERSION,
      SERVICEIMPORT_PLURAL,
      `${MANAGED_BY_LABEL}=${CONTROLLER_NAME}`,
    );
  }

  /** The Services holding our ClusterSet IPs (our labels), all namespaces. */
  derivedServices(): WatchedResource<V1Service> {
    const labelSelector = `${MANAGED_BY_LABEL}=${CONTROLLER_NAME},${MCS_SERVICE_NAME_LABEL}`;
    return this.clusterWide('DerivedService', '/api/v1/services', labelSelector, () =>
      this.core.listServiceForAllNamespaces({ labelSelector }),
    ) as WatchedResource<V1Service>;
  }

  /** Our MCS EndpointSlices (our endpointslice.kubernetes.io/managed-by value), all namespaces. */
  mcsEndpointSlices(): WatchedResource<V1EndpointSlice> {
    const labelSelector = `${ENDPOINTSLICE_MANAGED_BY_LABEL}=${MCS_CONTROLLER}`;
    return this.clusterWide(
      'McsEndpointSlice',
      '/apis/discovery.k8s.io/v1/endpointslices',
      labelSelector,
      () => this.discovery.listEndpointSliceForAllNamespaces({ labelSelector }),
    ) as unknown as WatchedResource<V1EndpointSlice>;
  }

  /** Every Gateway API Gateway of the cluster (spec.gatewayRef), started on first use. */
  gateways(): WatchedResource<GatewayObject> {
    return this.customClusterWide(
      'Gateway',
      GATEWAY_API_GROUP,
      'v1',
      'gateways',
    ) as WatchedResource<GatewayObject>;
  }

  /** Every route of one kind (HTTPRoute, GRPCRoute, TLSRoute) of the cluster, started on first use. */
  routes(kind: RouteKind): WatchedResource<RouteObject> {
    const { version, plural } = ROUTE_KINDS[kind];
    return this.customClusterWide(kind, GATEWAY_API_GROUP, version, plural) as WatchedResource<RouteObject>;
  }

  clusterProperties(): WatchedResource<KubernetesObject> {
    return this.customClusterWide('ClusterProperty', ABOUT_GROUP, ABOUT_VERSION, CLUSTERPROPERTY_PLURAL);
  }

  /** Whether a cluster-wide watch of this kind was started (a cluster that has been a ClusterSet member). */
  watching(kind: RemoteKind): boolean {
    return this.mcsWatches.has(kind);
  }

  private customClusterWide(
    kind: RemoteKind,
    group: string,
    version: string,
    plural: string,
    labelSelector?: string,
  ): WatchedResource<KubernetesObject> {
    return this.clusterWide(
      kind,
      `/apis/${group}/${version}/${plural}`,
      labelSelector,
      () =>
        this.custom.listClusterCustomObject({ group, version, plural, labelSelector }) as Promise<
          KubernetesListObject<KubernetesObject>
        >,
    );
  }

  /** A cluster-wide watch, started on first use. */
  private clusterWide<T extends KubernetesObject>(
    kind: RemoteKind,
    path: string,
    labelSelector: string | undefined,
    list: () => Promise<KubernetesListObject<T>>,
  ): WatchedResource<KubernetesObject> {
    let w = this.mcsWatches.get(kind);
    if (!w) {
      w = this.watch<T>(kind, path, list, labelSelector) as unknown as WatchedResource<KubernetesObject>;
      this.mcsWatches.set(kind, w);
    }
    return w;
  }

  /** Reachable unless a watch found the API server not answering; undefined before any has tried. */
  get healthy(): boolean | undefined {
    const all = this.all();
    if (!all.some((w) => w.tried)) return undefined;
    return !all.some(failsToReach);
  }

  /** Why the cluster is unreachable: the error of the first watch that found it so. */
  get lastError(): string | undefined {
    return this.all().find(failsToReach)?.lastError;
  }

  /**
   * Why what this watch's cache says cannot be trusted now, if so: the
   * cluster is unreachable (whichever watch found that out), or this watch
   * itself fails or has not connected yet.
   */
  unreachableReason(
    watch: Pick<WatchedResource<KubernetesObject>, 'healthy' | 'lastError'>,
  ): string | undefined {
    if (this.healthy === false) return this.lastError ?? 'API server not answering';
    if (!watch.healthy) return watch.lastError ?? 'API server not answering yet';
    return undefined;
  }

  /**
   * Whether the API server answers but does not serve this watch's resource (404: a CRD not
   * installed), so that its readers can read it as none rather than as a failure.
   */
  notServed(watch: Pick<WatchedResource<KubernetesObject>, 'healthy' | 'lastErrorStatus'>): boolean {
    return !watch.healthy && watch.lastErrorStatus === 404 && this.healthy !== false;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.probe.stop();
    await Promise.all(this.all().map((w) => w.stop()));
  }

  private all(): WatchedResource<KubernetesObject>[] {
    return [
      ...this.services.values(),
      ...this.endpointSlices.values(),
      ...this.mirrorSlices.values(),
      ...this.configMaps.values(),
      ...(this.nodeWatch ? [this.nodeWatch] : []),
      ...(this.namespaceWatch ? [this.namespaceWatch] : []),
      ...(this.recordSetWatch ? [this.recordSetWatch] : []),
      ...(this.probeReportWatch ? [this.probeReportWatch] : []),
      ...this.mcsWatches.values(),
    ] as WatchedResource<KubernetesObject>[];
  }

  private watch<T extends KubernetesObject>(
    kind: RemoteKind,
    path: string,
    list: () => Promise<KubernetesListObject<T>>,
    labelSelector?: string,
    fieldSelector?: string,
  ): WatchedResource<T> {
    const w = new WatchedResource<T>({
      kc: this.kc,
      path,
      list,
      labelSelector,
      fieldSelector,
      relistMs: this.opts.relistMs,
    });
    w.onChange((type, object) => this.opts.onChange({ kind, type, object }));
    w.onHealth((watchHealthy, watchError) => {
      const healthy = this.healthy;
      if (healthy === undefined || this.stopped) return;
      const changed = healthy !== this.wasHealthy;
      this.wasHealthy = healthy;
      if (healthy) this.probe.stop();
      else this.probe.start();
      this.opts.onHealth({
        healthy,
        changed,
        ...(healthy ? {} : { error: this.lastError }),
        watch: { path, healthy: watchHealthy, error: watchError, status: w.lastErrorStatus },
      });
    });
    w.start();
    return w;
  }
}
