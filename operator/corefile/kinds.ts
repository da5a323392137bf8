// What the Corefile controller reads in workload clusters beyond the Services
// of the records namespace: CoreDNS's one ConfigMap, watched alone.
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import { configMapsType } from '../manager/clusters/kinds.js';
import type { ResourceType } from '../manager/clusters/resource.js';

export const COREDNS_NAMESPACE = 'kube-system';
export const COREDNS_CONFIGMAP = 'coredns';

export const COREDNS_CONFIGMAPS: ResourceType<V1ConfigMap & KubernetesObject> = configMapsType('ConfigMap', {
  fieldSelector: `metadata.name=${COREDNS_CONFIGMAP}`,
});
