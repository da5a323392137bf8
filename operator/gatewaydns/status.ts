// Pure: what a reconcile found (cluster facts, conflicts, write outcomes) →
// GatewayDNS status. Unchanged input gives an equal status, so the reconciler
// can skip the write.
import type { ClusterStatus, GatewayDNSStatus } from '../../api/index.js';
import { READY, REASONS, setCondition, type ConditionInput } from './conditions.js';
import type { ConflictResult } from './desired.js';
import type { ClusterFacts } from './facts.js';

/** What writing the record set to one workload cluster came to. */
export interface TargetOutcome {
  cluster: string;
  /** written: changed now; current: already right; skipped: no records namespace (no dns-server); failed. */
  result: 'written' | 'current' | 'skipped' | 'failed';
  error?: string;
}

export interface StatusInput {
  generation: number | undefined;
  previous: GatewayDNSStatus | undefined;
  facts: ClusterFacts[];
  conflict: ConflictResult;
  targets: TargetOutcome[];
  now: Date;
}

export function statusFor(input: StatusInput): GatewayDNSStatus {
  const clusters: ClusterStatus[] = [...input.facts]
    .sort((a, b) => a.cluster.localeCompare(b.cluster))
    .map((f) => ({
      cluster: f.cluster,
      state: f.state,
      ...(f.addresses.length ? { addresses: f.addresses } : {}),
      ...(f.error ? { lastError: f.error } : {}),
      ...(f.lastSeen ? { lastSeen: f.lastSeen } : {}),
    }));
  return {
    observedGeneration: input.generation,
    selectedClusters: input.facts.length,
    conditions: setCondition(
      input.previous?.conditions,
      { type: READY, ...readyCondition(input), observedGeneration: input.generation },
      input.now,
    ),
    clusters,
  };
}

/**
 * The status of a GatewayDNS the operator has just seen, before its first
 * reconcile has read the selected clusters: Ready is Unknown, as metav1
 * conditions start. status.observedGeneration stays unset, because nothing
 * of the spec has been acted on yet; the condition's own observedGeneration
 * says which spec it is pending for.
 */
export function pendingStatus(generation: number | undefined, now: Date): GatewayDNSStatus {
  return {
    conditions: setCondition(
      undefined,
      {
        type: READY,
        status: 'Unknown',
        reason: REASONS.Pending,
        message: 'reading the selected clusters',
        observedGeneration: generation,
      },
      now,
    ),
  };
}

export function invalidStatus(
  generation: number | undefined,
  previous: GatewayDNSStatus | undefined,
  message: string,
  now: Date,
): GatewayDNSStatus {
  return {
    ...previous,
    observedGeneration: generation,
    conditions: setCondition(
      previous?.conditions,
      { type: READY, status: 'False', reason: REASONS.Invalid, message, observedGeneration: generation },
      now,
    ),
  };
}

/**
 * The Ready condition with the most useful reason first: what stops the
 * GatewayDNS from serving anything at all (no cluster selected, the Service
 * nowhere, no addresses anywhere) comes before a name conflict, which only
 * matters once there is something to publish, and before unreachable
 * clusters, whose last known addresses are still published.
 */
function readyCondition(input: StatusInput): Omit<ConditionInput, 'type'> {
  const { facts, conflict, targets } = input;
  const conflictNote = conflict.lostDomains.length
    ? `names ${conflict.lostDomains.join(', ')} are already claimed by gatewaydns ${conflict.with.join(', ')}; they are left out`
    : undefined;
  if (!facts.length)
    return {
      status: 'False',
      reason: REASONS.NoClustersSelected,
      message: 'the selector matches no Cluster',
    };
  // Nothing to publish, and every selected cluster answered: its own answer is the first problem.
  const reachable = facts.every((f) => f.state !== 'Unreachable');
  if (reachable && !facts.some((f) => f.addresses.length)) {
    const notFound = facts.every((f) => f.state === 'ServiceNotFound');
    const first = notFound
      ? `the Service exists in none of the selected clusters (${facts.map((f) => f.cluster).join(', ')})`
      : `no selected cluster gives the Service an address yet (${facts.map((f) => `${f.cluster}: ${f.state}`).join(', ')})`;
    return {
      status: 'False',
      reason: notFound ? REASONS.ServiceNotFound : REASONS.NoAddresses,
      message: [first, ...(conflictNote ? [conflictNote] : [])].join('; '),
    };
  }
  if (conflictNote) return { status: 'False', reason: REASONS.Conflict, message: conflictNote };
  const unreachable = [
    ...facts
      .filter((f) => f.state === 'Unreachable')
      .map((f) => `${f.cluster} (source: ${f.error ?? 'unreachable'})`),
    ...targets
      .filter((t) => t.result === 'failed')
      .map((t) => `${t.cluster} (target: ${t.error ?? 'failed'})`),
  ];
  if (unreachable.length)
    return {
      status: 'False',
      reason: REASONS.ClusterUnreachable,
      message: `unreachable, last known addresses kept: ${unreachable.join('; ')}`,
    };
  const ready = facts.filter((f) => f.state === 'Ready').map((f) => f.cluster);
  const others = facts.filter((f) => f.state !== 'Ready').map((f) => `${f.cluster}: ${f.state}`);
  const written = targets.filter((t) => t.result === 'written' || t.result === 'current').length;
  const parts = [
    `addresses of ${ready.join(', ')} published to ${written} workload cluster(s)`,
    ...(others.length ? [`not published: ${others.join(', ')}`] : []),
    ...(conflict.with.length
      ? [
          `newer gatewaydns ${conflict.with.join(', ')} claim some of the same names and leave them to this one`,
        ]
      : []),
  ];
  return { status: 'True', reason: REASONS.Ready, message: parts.join('; ') };
}
