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

/** A Cluster as an Event's involved object (the recorder needs its version and kind, which a cached object lacks). */
export function clusterEventTarget(metadata: { name?: string; namespace?: string; uid?: string }): {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; uid?: string };
} {
  return {
    apiVersion: CLUSTER_API_GROUP_VERSION,
    kind: 'Cluster',
    metadata: { name: metadata.name ?? '', namespace: metadata.namespace, uid: metadata.uid },
  };
}

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
  spec?: { paused?: boolean; controlPlaneRef?: { kind?: string; name?: string } };
  status?: {
    initialization?: { infrastructureProvisioned?: boolean; controlPlaneInitialized?: boolean };
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

/**
 * Paused and Deleting as the Cluster API contract says; Provisioning: Cluster API does not report
 * the Cluster up yet (notConnectableYet), so there is nothing to read or write there.
 */
export type Frozen = 'Paused' | 'Deleting' | 'Provisioning';

/** Why the operator must leave this Cluster as it is, or undefined when it acts on it as usual. */
export function frozenBy(cluster: ClusterLifecycleFields): 'Paused' | 'Deleting' | undefined {
  if (cluster.spec?.paused === true || cluster.metadata.annotations?.[PAUSED_ANNOTATION] !== undefined)
    return 'Paused';
  if (cluster.metadata.deletionTimestamp) return 'Deleting';
  return undefined;
}

/** The status message of a frozen cluster. */
export function frozenMessage(why: Frozen): string {
  switch (why) {
    case 'Paused':
      return 'the Cluster is paused (spec.paused or the cluster.x-k8s.io/paused annotation): its records are kept as last published and nothing is written into it until it is unpaused';
    case 'Deleting':
      return 'the Cluster is being deleted: its records are kept as last published, and its names held, until it is gone';
    case 'Provisioning':
      return "Cluster API does not report the Cluster's infrastructure provisioned and its control plane initialized yet: it is not connected to, and nothing is read from it or written into it until then";
  }
}

/** Why the operator leaves this Cluster as it is (frozen): frozenBy, else Provisioning while it may not be connected to. */
export function frozenOrProvisioning(cluster: ClusterLifecycleFields): Frozen | undefined {
  return frozenBy(cluster) ?? (notConnectableYet(cluster) ? 'Provisioning' : undefined);
}

/**
 * Why the operator must not connect to this Cluster yet, or undefined when it may. As Cluster
 * API's own cluster cache, not before the infrastructure is provisioned
 * (status.initialization.infrastructureProvisioned); and, for a Cluster with a control plane
 * provider, not before that provider reports the control plane initialized
 * (status.initialization.controlPlaneInitialized): a provider may write the kubeconfig Secret before
 * the API server it names answers. A Cluster that Cluster API has not reconciled yet has neither.
 */
export function notConnectableYet(cluster: ClusterLifecycleFields): string | undefined {
  const init = cluster.status?.initialization;
  if (init?.infrastructureProvisioned !== true)
    return `the Cluster's infrastructure is not provisioned${saidBy(cluster, 'InfrastructureReady')}: not connecting until it is`;
  if (cluster.spec?.controlPlaneRef && init.controlPlaneInitialized !== true)
    return `the Cluster's control plane is not initialized${saidBy(cluster, 'ControlPlaneInitialized')}: not connecting until it is`;
  return undefined;
}

/** What Cluster API's condition of this type says, for a message. */
function saidBy(cluster: ClusterLifecycleFields, type: string): string {
  const c = cluster.status?.conditions?.find((x) => x.type === type);
  if (!c) return ' (Cluster API has not reported it yet)';
  return ` (Cluster API: ${type}=${c.status}${c.reason ? `, reason ${c.reason}` : ''}${c.message ? `: ${c.message}` : ''})`;
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
