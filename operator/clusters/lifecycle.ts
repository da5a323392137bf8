// Pure: the Cluster API contract on a Cluster's lifecycle. Every Cluster API
// controller leaves a paused Cluster alone (spec.paused, or the annotation
// cluster.x-k8s.io/paused on it: util/annotations IsPaused), which is how
// `clusterctl move` and a GitOps recreate hand a cluster over without anyone
// acting on it meanwhile; and a Cluster being deleted is still there until
// its finalizers are done. capi-dns does the same: a frozen cluster's record
// sets are neither rewritten nor withdrawn, nothing is written into it, and its
// names stay held until it is gone.

/** The annotation that pauses one Cluster's reconciliation (cluster.x-k8s.io/paused, any value). */
export const PAUSED_ANNOTATION = 'cluster.x-k8s.io/paused';

export interface ClusterLifecycleFields {
  metadata: { annotations?: Record<string, string>; deletionTimestamp?: unknown };
  spec?: { paused?: boolean };
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
