// One workload cluster as the operator sees it: a client built from its
// kubeconfig, and watched caches of what the operator reads there (Services
// of a namespace, Nodes, Namespaces, our DNSRecordSets), each started on
// first use. Whether the cluster is reachable is what its watches say.
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
import { DNSRECORDSET_PLURAL, GROUP, MANAGED_BY_LABEL, CONTROLLER_NAME, VERSION } from '../../api/index.js';
import type { DNSRecordSet } from '../../api/index.js';
import { WatchedResource, type ChangeType } from '../runtime/informer.js';

export type RemoteKind = 'Service' | 'Node' | 'Namespace' | 'DNSRecordSet' | 'ConfigMap' | 'EndpointSlice';

/** The EndpointSlice controller's label naming a slice's Service: only such slices are watched. */
const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

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
  onHealth: (healthy: boolean, error?: string) => void;
}

export class RemoteCluster {
  readonly kc: KubeConfig;
  readonly objects: KubernetesObjectApi;
  readonly core: CoreV1Api;
  private readonly custom: CustomObjectsApi;
  private readonly discovery: DiscoveryV1Api;
  private readonly endpointSlices = new Map<string, WatchedResource<V1EndpointSlice>>();
  private readonly services = new Map<string, WatchedResource<V1Service>>();
  private readonly configMaps = new Map<string, WatchedResource<V1ConfigMap>>();
  private nodeWatch?: WatchedResource<V1Node>;
  private namespaceWatch?: WatchedResource<V1Namespace>;
  private recordSetWatch?: WatchedResource<DNSRecordSet & KubernetesObject>;
  private wasHealthy: boolean | undefined;

  constructor(private readonly opts: RemoteClusterOptions) {
    this.kc = opts.kc;
    this.objects = KubernetesObjectApi.makeApiClient(opts.kc);
    this.core = opts.kc.makeApiClient(CoreV1Api);
    this.custom = opts.kc.makeApiClient(CustomObjectsApi);
    this.discovery = opts.kc.makeApiClient(DiscoveryV1Api);
  }

  get key(): string {
    return this.opts.key;
  }

  /** Services of one namespace (the GatewayDNS's spec.service names a namespace). */
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
   * releaseEndpointSlices: a namespace of a large cluster has many, so the watch
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

  releaseEndpointSlices(namespace: string): void {
    const w = this.endpointSlices.get(namespace);
    if (!w) return;
    this.endpointSlices.delete(namespace);
    void w.stop();
  }

  /** Namespaces whose EndpointSlices are watched now. */
  get endpointSliceNamespaces(): string[] {
    return [...this.endpointSlices.keys()].sort();
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

  /** Reachable when every watch started so far is connected; undefined before any has tried. */
  get healthy(): boolean | undefined {
    const all = this.all();
    if (!all.some((w) => w.tried)) return undefined;
    return all.every((w) => w.healthy || !w.tried);
  }

  get lastError(): string | undefined {
    return this.all().find((w) => w.lastError)?.lastError;
  }

  async stop(): Promise<void> {
    await Promise.all(this.all().map((w) => w.stop()));
  }

  private all(): WatchedResource<KubernetesObject>[] {
    return [
      ...this.services.values(),
      ...this.endpointSlices.values(),
      ...this.configMaps.values(),
      ...(this.nodeWatch ? [this.nodeWatch] : []),
      ...(this.namespaceWatch ? [this.namespaceWatch] : []),
      ...(this.recordSetWatch ? [this.recordSetWatch] : []),
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
    w.onHealth(() => {
      const healthy = this.healthy;
      if (healthy === undefined || healthy === this.wasHealthy) return;
      this.wasHealthy = healthy;
      this.opts.onHealth(healthy, healthy ? undefined : this.lastError);
    });
    w.start();
    return w;
  }
}
