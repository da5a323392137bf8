// Pure: a ClusterProfile's status from what the operator knows of the Cluster
// (KEP-4322). ControlPlaneHealthy follows Cluster API's v1beta2 conditions;
// Joined says whether a consumer can connect through the access provider;
// properties carry KEP-2149's two ClusterSet properties while the Cluster's
// namespace is a ClusterSet; the version is the workload cluster's own.
// Everything kept from the previous status when it has not changed
// (lastTransitionTime, lastObservedTime), so a reconcile that finds nothing
// new writes nothing.
import {
  CLUSTER_ID_PROPERTY,
  CLUSTERSET_PROPERTY,
  PROFILE_CONDITIONS,
  type AccessProvider,
  type ClusterProfileStatus,
  type ProfileCondition,
  type ProfileProperty,
} from '../../api/index.js';
import { setCondition, type ConditionInput } from '../model/conditions.js';
import type { ClusterCondition } from '../manager/clusters/lifecycle.js';

/** The reasons of the conditions this controller writes. */
export const PROFILE_REASONS = {
  /** Cluster API's ControlPlaneAvailable is True. */
  ControlPlaneAvailable: 'ControlPlaneAvailable',
  /** Cluster API's ControlPlaneAvailable is False or Unknown. */
  ControlPlaneNotAvailable: 'ControlPlaneNotAvailable',
  /** Cluster API cannot reach the workload API server (its RemoteConnectionProbe is False). */
  RemoteConnectionProbeFailed: 'RemoteConnectionProbeFailed',
  /** Cluster API reports no ControlPlaneAvailable condition (yet). */
  NotReported: 'NotReported',
  /** The Cluster is up and its access provider names a kubeconfig Secret that is there. */
  Joined: 'Joined',
  /** Cluster API does not report the Cluster up yet. */
  Provisioning: 'Provisioning',
  /** No kubeconfig Secret, or one without the key. */
  NoKubeconfig: 'NoKubeconfig',
  /** The kubeconfig asks for what no consumer should run or read (exec, file paths). */
  KubeconfigRefused: 'KubeconfigRefused',
} as const;

export interface ProfileStatusInput {
  /** The Cluster's name, its id in the ClusterSet (as the MCS controller gives it). */
  clusterName: string;
  /** Cluster API's v1beta2 conditions of the Cluster. */
  clusterConditions: readonly ClusterCondition[];
  /** Why no client may be built yet (Cluster API does not report it up), if so. */
  notConnectableYet?: string;
  /** The access provider, or why there is none. */
  access: { provider: AccessProvider } | { problem: string; refused?: boolean };
  /** The ClusterSet of the Cluster's namespace (its multicluster.x-k8s.io/clusterset label). */
  clusterSet?: string;
  /** The workload cluster's Kubernetes version, when known. */
  kubernetesVersion?: string;
  previous?: ClusterProfileStatus;
  generation?: number;
  now: Date;
}

export function profileStatus(input: ProfileStatusInput): ClusterProfileStatus {
  const { previous, now } = input;
  let conditions = (previous?.conditions ?? []) as ProfileCondition[];
  for (const c of [controlPlaneHealthy(input.clusterConditions), joined(input)])
    conditions = setCondition(
      conditions,
      { ...c, observedGeneration: input.generation },
      now,
    ) as ProfileCondition[];
  conditions = [...conditions].sort((a, b) => a.type.localeCompare(b.type));
  const version = input.kubernetesVersion ?? previous?.version?.kubernetes;
  const properties = propertiesOf(input.clusterName, input.clusterSet, previous?.properties ?? [], now);
  return {
    conditions,
    ...(version ? { version: { kubernetes: version } } : {}),
    ...(properties.length ? { properties } : {}),
    ...('provider' in input.access ? { accessProviders: [input.access.provider] } : {}),
  };
}

/** ControlPlaneHealthy from Cluster API: its probe of the API server first, then ControlPlaneAvailable. */
export function controlPlaneHealthy(conditions: readonly ClusterCondition[]): ConditionInput {
  const type = PROFILE_CONDITIONS.ControlPlaneHealthy;
  const probe = conditions.find((c) => c.type === 'RemoteConnectionProbe');
  if (probe?.status === 'False')
    return {
      type,
      status: 'False',
      reason: PROFILE_REASONS.RemoteConnectionProbeFailed,
      message: `Cluster API's RemoteConnectionProbe is False${detail(probe)}`,
    };
  const available = conditions.find((c) => c.type === 'ControlPlaneAvailable');
  if (!available)
    return {
      type,
      status: 'Unknown',
      reason: PROFILE_REASONS.NotReported,
      message: 'Cluster API reports no ControlPlaneAvailable condition on the Cluster (yet)',
    };
  const up = available.status === 'True';
  return {
    type,
    status: up ? 'True' : available.status === 'False' ? 'False' : 'Unknown',
    reason: up ? PROFILE_REASONS.ControlPlaneAvailable : PROFILE_REASONS.ControlPlaneNotAvailable,
    message: `Cluster API's ControlPlaneAvailable is ${available.status}${detail(available)}`,
  };
}

function joined(input: ProfileStatusInput): ConditionInput {
  const type = PROFILE_CONDITIONS.Joined;
  if (input.notConnectableYet)
    return { type, status: 'False', reason: PROFILE_REASONS.Provisioning, message: input.notConnectableYet };
  if ('problem' in input.access)
    return {
      type,
      status: 'False',
      reason: input.access.refused ? PROFILE_REASONS.KubeconfigRefused : PROFILE_REASONS.NoKubeconfig,
      message: input.access.problem,
    };
  return {
    type,
    status: 'True',
    reason: PROFILE_REASONS.Joined,
    message:
      'Cluster API reports the Cluster up; status.accessProviders names its kubeconfig Secret (kubeconfig-secretreader)',
  };
}

/** KEP-2149's id and ClusterSet while the namespace is a ClusterSet; lastObservedTime kept while a value stays. */
export function propertiesOf(
  clusterName: string,
  clusterSet: string | undefined,
  previous: readonly ProfileProperty[],
  now: Date,
): ProfileProperty[] {
  if (!clusterSet) return [];
  return (
    [
      [CLUSTER_ID_PROPERTY, clusterName],
      [CLUSTERSET_PROPERTY, clusterSet],
    ] as const
  ).map(([name, value]) => {
    const before = previous.find((p) => p.name === name && p.value === value);
    return { name, value, lastObservedTime: before?.lastObservedTime ?? now.toISOString() };
  });
}

function detail(c: ClusterCondition): string {
  const parts = [c.reason, c.message].filter(Boolean);
  return parts.length ? ` (${parts.join(': ')})` : '';
}
