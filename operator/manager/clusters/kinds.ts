// Kubernetes's own resource types, as any controller reads them from a
// workload cluster: Services, Namespaces, Nodes, EndpointSlices and
// ConfigMaps, each narrowed by the selector its reader names. A feature's own
// kinds are declared beside the feature.
import type {
  KubernetesListObject,
  KubernetesObject,
  V1ConfigMap,
  V1EndpointSlice,
  V1Namespace,
  V1Node,
  V1Secret,
  V1Service,
} from '@kubernetes/client-node';
import { SERVICE_NAME_LABEL } from '../../../api/index.js';
import type { ResourceApis, ResourceType } from './resource.js';

type Listed<T> = Promise<KubernetesListObject<T & KubernetesObject>>;
interface Selectors {
  labelSelector?: string;
  fieldSelector?: string;
}

function coreType<T extends KubernetesObject>(
  kind: string,
  groupVersionPath: string,
  plural: string,
  selectors: Selectors,
  list: (api: ResourceApis, namespace: string | undefined, selectors: Selectors) => Listed<T>,
): ResourceType<T> {
  return {
    kind,
    ...selectors,
    path: (namespace) => `${groupVersionPath}${namespace ? `/namespaces/${namespace}` : ''}/${plural}`,
    list: (api, namespace) => list(api, namespace, selectors) as Promise<KubernetesListObject<T>>,
  };
}

/** Services, all of a namespace or those a label (or field: metadata.name=) selector picks. */
export function servicesType(
  kind = 'Service',
  labelSelector?: string,
  fieldSelector?: string,
): ResourceType<V1Service & KubernetesObject> {
  return coreType<V1Service & KubernetesObject>(
    kind,
    '/api/v1',
    'services',
    { labelSelector, ...(fieldSelector ? { fieldSelector } : {}) },
    (api, namespace, s) =>
      namespace
        ? api.core.listNamespacedService({ namespace, ...s })
        : api.core.listServiceForAllNamespaces(s),
  );
}

export const SERVICES = servicesType();

export const NAMESPACES: ResourceType<V1Namespace & KubernetesObject> = coreType<
  V1Namespace & KubernetesObject
>('Namespace', '/api/v1', 'namespaces', {}, (api) => api.core.listNamespace());

export const NODES: ResourceType<V1Node & KubernetesObject> = coreType<V1Node & KubernetesObject>(
  'Node',
  '/api/v1',
  'nodes',
  {},
  (api) => api.core.listNode(),
);

/** EndpointSlices a label selector picks (by whom they are managed, or for which Service). */
export function endpointSlicesType(
  kind: string,
  labelSelector: string,
): ResourceType<V1EndpointSlice & KubernetesObject> {
  return coreType<V1EndpointSlice & KubernetesObject>(
    kind,
    '/apis/discovery.k8s.io/v1',
    'endpointslices',
    { labelSelector },
    (api, namespace, s) =>
      namespace
        ? api.discovery.listNamespacedEndpointSlice({ namespace, ...s })
        : api.discovery.listEndpointSliceForAllNamespaces(s),
  );
}

/** ConfigMaps a label or field selector picks (metadata.name=coredns: one object, not a namespace's worth). */
export function configMapsType(
  kind: string,
  selectors: Selectors,
): ResourceType<V1ConfigMap & KubernetesObject> {
  return coreType<V1ConfigMap & KubernetesObject>(
    kind,
    '/api/v1',
    'configmaps',
    selectors,
    (api, namespace, s) =>
      namespace
        ? api.core.listNamespacedConfigMap({ namespace, ...s })
        : api.core.listConfigMapForAllNamespaces(s),
  );
}

/** Secrets a field selector picks by name (one object the operator writes, never a namespace's worth). */
export function secretsType(kind: string, fieldSelector: string): ResourceType<V1Secret & KubernetesObject> {
  return coreType<V1Secret & KubernetesObject>(
    kind,
    '/api/v1',
    'secrets',
    { fieldSelector },
    (api, namespace, s) =>
      namespace ? api.core.listNamespacedSecret({ namespace, ...s }) : api.core.listSecretForAllNamespaces(s),
  );
}

/** The EndpointSlices that belong to a Service (kubernetes.io/service-name set), as the sources read them. */
export const SERVICE_ENDPOINT_SLICES = endpointSlicesType('EndpointSlice', SERVICE_NAME_LABEL);
