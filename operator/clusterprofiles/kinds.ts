// What the ClusterProfile controller reads of the management cluster: the
// ClusterProfiles of the watched namespaces (all of them, not only ours: a
// profile another cluster manager keeps under a Cluster's name is left alone,
// and must be seen to be). The Clusters and their kubeconfig Secrets come
// through the manager's ClusterProvider.
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  CLUSTERPROFILE_PLURAL,
  INVENTORY_GROUP,
  INVENTORY_VERSION,
  type ClusterProfile,
} from '../../api/index.js';
import { customResourceType } from '../manager/clusters/resource.js';

export const CLUSTER_PROFILES = customResourceType<ClusterProfile & KubernetesObject>({
  kind: 'ClusterProfile',
  group: INVENTORY_GROUP,
  version: INVENTORY_VERSION,
  plural: CLUSTERPROFILE_PLURAL,
});
