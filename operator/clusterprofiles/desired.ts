// Pure: the ClusterProfile a Cluster API Cluster publishes (KEP-4322), its
// object (name, labels, owner, cluster manager) and its access provider. Only
// what a consumer needs to connect goes in: the server and CA of the Cluster's
// kubeconfig, and where the kubeconfig Secret is; no credential (ADR 0214).
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  CLUSTER_MANAGER_LABEL,
  EXEC_EXTENSION,
  INVENTORY_GROUP,
  INVENTORY_VERSION,
  KUBECONFIG_SECRETREADER,
  kubeconfigSecretName,
  type AccessProvider,
  type ClusterProfile,
  type ProfileCluster,
} from '../../api/index.js';
import { loadUntrustedKubeconfig, STRICT_POLICY } from '../manager/clusters/kubeconfig.js';
import { CLUSTER_API_GROUP_VERSION } from '../manager/clusters/lifecycle.js';

/** The Cluster as the profile names it: its name, namespace and uid (the owner). */
export interface ClusterRef {
  name: string;
  namespace: string;
  uid: string;
}

/** The key of the kubeconfig in Cluster API's "<cluster>-kubeconfig" Secret. */
export const KUBECONFIG_KEY = 'value';

/**
 * The ClusterProfile of a Cluster as applied (server-side apply: these fields only, status apart):
 * in the Cluster's namespace, with its name, owned by it (the garbage collector deletes it with
 * the Cluster; no blockOwnerDeletion, which would need clusters/finalizers), labelled and naming
 * the cluster manager.
 */
export function profileObject(
  cluster: ClusterRef,
  clusterManager: string,
): ClusterProfile & KubernetesObject {
  return {
    apiVersion: `${INVENTORY_GROUP}/${INVENTORY_VERSION}`,
    kind: 'ClusterProfile',
    metadata: {
      name: cluster.name,
      namespace: cluster.namespace,
      labels: { [CLUSTER_MANAGER_LABEL]: clusterManager },
      ownerReferences: [
        {
          apiVersion: CLUSTER_API_GROUP_VERSION,
          kind: 'Cluster',
          name: cluster.name,
          uid: cluster.uid,
          controller: true,
        },
      ],
    },
    spec: { displayName: cluster.name, clusterManager: { name: clusterManager } },
  };
}

/**
 * Whether an existing ClusterProfile of the Cluster's name is this operator's to keep: one owned
 * by this very Cluster (its uid), or one naming our cluster manager (by label and spec: a profile
 * left by a Cluster of the same name deleted and created again is taken over, its owner replaced).
 * Another cluster manager's profile (OCM's, a GKE fleet's) is never taken over.
 */
export function isOurs(profile: ClusterProfile, cluster: ClusterRef, clusterManager: string): boolean {
  const owners = profile.metadata.ownerReferences ?? [];
  if (owners.some((o) => o.kind === 'Cluster' && o.uid === cluster.uid)) return true;
  return (
    profile.spec?.clusterManager?.name === clusterManager &&
    profile.metadata.labels?.[CLUSTER_MANAGER_LABEL] === clusterManager
  );
}

/** Whether the profile as it is already has what profileObject applies. */
export function profileUpToDate(
  profile: ClusterProfile,
  cluster: ClusterRef,
  clusterManager: string,
): boolean {
  const want = profileObject(cluster, clusterManager);
  const owner = want.metadata.ownerReferences?.[0];
  return (
    profile.metadata.labels?.[CLUSTER_MANAGER_LABEL] === clusterManager &&
    profile.spec?.clusterManager?.name === clusterManager &&
    profile.spec?.displayName === want.spec.displayName &&
    (profile.metadata.ownerReferences ?? []).some(
      (o) => o.uid === owner?.uid && o.kind === owner.kind && o.controller === true,
    )
  );
}

/**
 * The kubeconfig-secretreader access provider of a Cluster: the server, CA and TLS server name of
 * its kubeconfig's current context, and the exec extension the module's plugin reads (Secret
 * name, key, namespace). The kubeconfig is read under the operator's strict policy (issue 19): one
 * that asks for exec or a file path is refused here as the plugin would refuse it.
 */
export function accessProviderOf(
  cluster: Pick<ClusterRef, 'name' | 'namespace'>,
  kubeconfigText: string,
): { provider: AccessProvider } | { problem: string; refused?: boolean } {
  const loaded = loadUntrustedKubeconfig(kubeconfigText, STRICT_POLICY);
  if (!loaded.ok) return { problem: `kubeconfig refused: ${loaded.error}`, refused: true };
  const current = loaded.kc.getCurrentCluster();
  if (!current) return { problem: 'kubeconfig has no current cluster' };
  const profileCluster: ProfileCluster = {
    server: current.server,
    ...(current.caData ? { 'certificate-authority-data': current.caData } : {}),
    ...(current.tlsServerName ? { 'tls-server-name': current.tlsServerName } : {}),
    extensions: [
      {
        name: EXEC_EXTENSION,
        extension: {
          name: kubeconfigSecretName(cluster.name),
          key: KUBECONFIG_KEY,
          namespace: cluster.namespace,
        },
      },
    ],
  };
  return { provider: { name: KUBECONFIG_SECRETREADER, cluster: profileCluster } };
}
