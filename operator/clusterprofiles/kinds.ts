// What the ClusterProfile controller reads of the management cluster: the
// ClusterProfiles of the watched namespaces (all of them, not only ours: a
// profile another cluster manager keeps under a Cluster's name is left alone,
// and must be seen to be). Declared beside the ClusterProfile provider, which
// reads the same informer (--inventory=cluster-profile); the Clusters and their
// kubeconfig Secrets come through the manager's ClusterProvider.
export { CLUSTER_PROFILES } from '../manager/clusters/profile-provider.js';
