// What a cache is asked for, as controller-runtime's GetInformer(obj) is: a
// resource type a controller declares beside itself (its kind, where it is
// watched, how it is listed, which objects of it). The caches know nothing
// else of it, so adding a controller adds types without touching them; two
// controllers that declare the same watch (same path and selectors) share one
// informer.
import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import type { WatchedResource } from '../runtime/informer.js';

/** The typed clients a list is made with: client-node has no generic list of a path. */
export interface ResourceApis {
  readonly core: CoreV1Api;
  readonly discovery: DiscoveryV1Api;
  readonly custom: CustomObjectsApi;
}

export function resourceApis(kc: KubeConfig): ResourceApis {
  return {
    core: kc.makeApiClient(CoreV1Api),
    discovery: kc.makeApiClient(DiscoveryV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
  };
}

export interface ResourceType<T extends KubernetesObject = KubernetesObject> {
  /** Names the informer in change events and logs ("Service", "ServiceExport", "MirrorEndpointSlice"). */
  readonly kind: string;
  /** The collection's path: cluster-wide without a namespace, that namespace's otherwise. */
  path(namespace?: string): string;
  list(api: ResourceApis, namespace?: string): Promise<KubernetesListObject<T>>;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
}

/** The informer a type and a namespace (none: cluster-wide) name: one per distinct watch. */
export function informerKey(type: ResourceType<KubernetesObject>, namespace?: string): string {
  return [type.path(namespace), type.labelSelector ?? '', type.fieldSelector ?? ''].join('|');
}

/** A custom resource, or any resource of a named API group, listed through the custom-objects client. */
export function customResourceType<T extends KubernetesObject = KubernetesObject>(def: {
  kind: string;
  group: string;
  version: string;
  plural: string;
  labelSelector?: string;
  /** A cluster-scoped resource: watched cluster-wide whatever namespace the cache is limited to. */
  clusterScoped?: boolean;
}): ResourceType<T> {
  const { group, version, plural, labelSelector, clusterScoped } = def;
  const within = (namespace?: string) => (clusterScoped ? undefined : namespace);
  return {
    kind: def.kind,
    labelSelector,
    path: (ns) => {
      const namespace = within(ns);
      return `/apis/${group}/${version}${namespace ? `/namespaces/${namespace}` : ''}/${plural}`;
    },
    list: (api, ns) => {
      const namespace = within(ns);
      return (
        namespace
          ? api.custom.listNamespacedCustomObject({ group, version, namespace, plural, labelSelector })
          : api.custom.listClusterCustomObject({ group, version, plural, labelSelector })
      ) as Promise<KubernetesListObject<T>>;
    },
  };
}

/** What a cache starts and waits for besides its informers (a provider's own reads). */
export interface CacheSource {
  start(): void;
  readonly synced: boolean;
  readonly lastError?: string;
  waitForFirstAttempt(timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

/** A cache that hands out informers by type, and starts and syncs other sources with them (the manager's). */
export interface InformerCache {
  informer<T extends KubernetesObject>(type: ResourceType<T>): WatchedResource<T>;
  addSource(source: CacheSource): void;
}
