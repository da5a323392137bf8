// The labels on the Services and EndpointSlices that capi-dns-controller
// keeps in workload clusters for a GatewayDNS with spec.mirror: what tells
// our objects from everyone else's, and what CoreDNS, kube-proxy and a mesh
// read from them.

/** The EndpointSlice label every controller sets on the slices it manages (the EndpointSlice API's convention). */
export const ENDPOINTSLICE_MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
/** Our value of it: a domain-qualified controller name, as endpointslice-controller.k8s.io is. */
export const MIRROR_CONTROLLER = 'capi-dns-controller.connectivity.tanzu.vmware.com';
/** The label naming a slice's Service (kube-proxy and CoreDNS find slices by it). */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
/** The Multi-Cluster Services API's label naming the cluster a slice's endpoints come from (KEP-1645). */
export const MCS_SOURCE_CLUSTER_LABEL = 'multicluster.kubernetes.io/source-cluster';

/**
 * The EndpointSlice of one source cluster and address family. A dot cannot
 * occur in a Service or cluster name, so no two (name, cluster, family) give
 * the same slice name; slice names are DNS subdomains, so dots are allowed.
 */
export function mirrorSliceName(service: string, sourceCluster: string, family: 'IPv4' | 'IPv6'): string {
  return `${service}.${sourceCluster}${family === 'IPv6' ? '.ipv6' : ''}`;
}
