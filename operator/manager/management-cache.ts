// The management cluster's informers every controller reads from, as
// controller-runtime's manager cache: Namespaces (their grants and ClusterSet
// labels), the informers controllers and the cluster provider ask for by
// resource type (informer(type)), and any other source a provider keeps (the
// kubeconfig Secrets), started together and synced before any controller
// starts. Namespaced when --namespace is set, so that a namespace-only Role is
// enough.
import {
  CoreV1Api,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type V1Namespace,
} from '@kubernetes/client-node';
import {
  informerKey,
  resourceApis,
  type CacheSource,
  type InformerCache,
  type ResourceApis,
  type ResourceType,
} from './clusters/resource.js';
import { WatchedResource } from './runtime/informer.js';

export interface ManagementCacheOptions {
  kc: KubeConfig;
  /** Only this management namespace; all when undefined. */
  namespace?: string;
  relistMs?: number;
}

export class ManagementCache implements InformerCache {
  /**
   * Namespaces of the management cluster: their annotation grants workload namespaces
   * (gatewaydns/claims/namespace-grants.ts), their ClusterSet label makes their Clusters one ClusterSet (mcs/).
   */
  readonly namespaces: WatchedResource<V1Namespace & KubernetesObject>;
  /** Informers asked for by type, by informerKey. */
  private readonly byType = new Map<string, WatchedResource<KubernetesObject>>();
  private readonly sources: CacheSource[] = [];
  private readonly apis: ResourceApis;
  private startedAt?: number;

  constructor(private readonly opts: ManagementCacheOptions) {
    const { kc, namespace: ns, relistMs } = opts;
    this.apis = resourceApis(kc);
    const core = kc.makeApiClient(CoreV1Api);
    // Namespaced (--namespace): the one Namespace, by field selector.
    const oneNamespace = ns ? `metadata.name=${ns}` : undefined;
    this.namespaces = new WatchedResource<V1Namespace & KubernetesObject>({
      kc,
      path: '/api/v1/namespaces',
      fieldSelector: oneNamespace,
      list: () =>
        core.listNamespace({ fieldSelector: oneNamespace }) as Promise<
          KubernetesListObject<V1Namespace & KubernetesObject>
        >,
      relistMs,
    });
  }

  /** A source started and synced with the informers (before start). */
  addSource(source: CacheSource): void {
    this.sources.push(source);
    if (this.startedAt !== undefined) source.start();
  }

  /**
   * The informer of a resource type, in the watched namespace (--namespace) or cluster-wide: one
   * per type however many controllers ask. Asked for before start (as a controller is built), it
   * is synced before any controller starts; asked for later, it starts at once.
   */
  informer<T extends KubernetesObject>(type: ResourceType<T>): WatchedResource<T> {
    const ns = this.opts.namespace;
    const key = informerKey(type as ResourceType<KubernetesObject>, ns);
    let w = this.byType.get(key);
    if (!w) {
      w = new WatchedResource<T>({
        kc: this.opts.kc,
        path: type.path(ns),
        list: () => type.list(this.apis, ns),
        labelSelector: type.labelSelector,
        fieldSelector: type.fieldSelector,
        relistMs: this.opts.relistMs,
      }) as unknown as WatchedResource<KubernetesObject>;
      this.byType.set(key, w);
      if (this.startedAt !== undefined) w.start();
    }
    return w as unknown as WatchedResource<T>;
  }

  /** Namespaces first, so that every grant is known before the first reconcile: none reads a namespace it may not. */
  private get informers(): CacheSource[] {
    return [this.namespaces, ...this.sources, ...this.byType.values()];
  }

  /** Starts every informer and waits for their first lists. */
  async start(syncTimeoutMs: number): Promise<void> {
    for (const w of this.informers) w.start();
    const began = Date.now();
    this.startedAt = began;
    for (const w of this.informers) {
      while (!w.synced) {
        if (Date.now() - began > syncTimeoutMs)
          throw new Error(`management informers not synced after ${syncTimeoutMs} ms: ${w.lastError ?? ''}`);
        await w.waitForFirstAttempt(1000);
        if (!w.synced) await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  get synced(): boolean {
    return this.informers.every((w) => w.synced);
  }

  async stop(): Promise<void> {
    await Promise.all(this.informers.map((w) => w.stop()));
  }
}
