// Pure: the Cluster API contract on a Cluster's lifecycle. Every Cluster API
// controller leaves a paused Cluster alone (spec.paused, or the annotation
// cluster.x-k8s.io/paused on it: util/annotations IsPaused), which is how
// `clusterctl move` and a GitOps recreate hand a cluster over without anyone
// acting on it meanwhile; and a Cluster being deleted is still there until
// its finalizers are done. capi-dns does the same: a frozen cluster's record
// sets are neither rewritten nor withdrawn, nothing is written into it, and its
// names stay held until it is gone.

/** The Cluster API version the operator lists and watches Clusters at (v1beta2: Cluster API v1.11 and later). */
export const CLUSTER_API_GROUP = 'cluster.x-k8s.io';
export const CLUSTER_API_VERSION = 'v1beta2';
export const CLUSTER_API_GROUP_VERSION = `${CLUSTER_API_GROUP}/${CLUSTER_API_VERSION}`;

/** The annotation that pauses one Cluster's reconciliation (cluster.x-k8s.io/paused, any value). */
export const PAUSED_ANNOTATION = 'cluster.x-k8s.io/paused';

/** A condition as Cluster API v1beta2 writes it (metav1.Condition). */
export interface ClusterCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface ClusterLifecycleFields {
  metadata: { annotations?: Record<string, string>; deletionTimestamp?: unknown };
  spec?: { paused?: boolean };
  status?: {
    initialization?: { controlPlaneInitialized?: boolean };
    conditions?: ClusterCondition[];
  };
}

/** What the operator reads of a Cluster API Cluster. */
export interface ClusterObject extends ClusterLifecycleFields {
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: unknown;
  };
}

export type Frozen = 'Paused' | 'Deleting';

/** Why the operator must leave this Cluster as it is, or undefined when it acts on it as usual. */
export function frozenBy(cluster: ClusterLifecycleFields): Frozen | undefined {
  if (cluster.spec?.paused === true || cluster.metadata.annotations?.[PAUSED_ANNOTATION] !== undefined)
    return 'Paused';
  if (cluster.metadata.deletionTimestamp) return 'Deleting';
  return undefined;
}

/** The status message of a frozen cluster. */
export function frozenMessage(why: Frozen): string {
  return why === 'Paused'
    ? 'the Cluster is paused (spec.paused or the cluster.x-k8s.io/paused annotation): its records are kept as last published and nothing is written into it until it is unpaused'
    : 'the Cluster is being deleted: its records are kept as last published, and its names held, until it is gone';
}

/**
 * Why the operator must not connect to this Cluster yet, or undefined when it may: Cluster API's
 * own cluster cache connects only once the control plane is initialized
 * (status.initialization.controlPlaneInitialized, mirrored in the ControlPlaneInitialized
 * condition), because before that the kubeconfig Secret may point at an API server that is not
 * there. A Cluster Cluster API has not reconciled yet counts as not initialized.
 */
export function notConnectableYet(cluster: ClusterLifecycleFields): string | undefined {
  const condition = cluster.status?.conditions?.find((c) => c.type === 'ControlPlaneInitialized');
  if (cluster.status?.initialization?.controlPlaneInitialized === true || condition?.status === 'True')
    return undefined;
  const said = condition
    ? ` (Cluster API: ControlPlaneInitialized=${condition.status}${condition.reason ? `, reason ${condition.reason}` : ''}${condition.message ? `: ${condition.message}` : ''})`
    : ' (Cluster API has not reported it yet)';
  return `the Cluster's control plane is not initialized${said}: not connecting until it is`;
}

/**
 * The part of a Cluster the operator acts on: its labels (selectors), its annotations (the paused
 * one, the Corefile opt-out), its lifecycle. Cluster API rewrites a Cluster's status often
 * (conditions, probes); only a change of this enqueues reconciles.
 */
export function clusterFingerprint(cluster: ClusterObject): string {
  return JSON.stringify([
    cluster.metadata.uid,
    cluster.metadata.labels ?? {},
    cluster.metadata.annotations ?? {},
    frozenBy(cluster) ?? '',
    notConnectableYet(cluster) === undefined,
  ]);
}
