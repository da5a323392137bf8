// Pure: what a reconcile found (cluster facts, conflicts, write outcomes) →
// GatewayDNS status. Unchanged input gives an equal status, so the reconciler
// can skip the write.
import type { ClusterStatus, GatewayDNSStatus } from '../../../api/index.js';
import {
  DELEGATION_REASONS,
  HOSTNAME_REASONS,
  NAMES_DELEGATED,
  HOSTNAMES_ACCEPTED,
  READY,
  REASONS,
  removeCondition,
  setCondition,
  type ConditionInput,
} from '../../model/conditions.js';
import type { HostnameResult } from '../claims/hostnames.js';
import type { ConflictResult } from '../claims/conflicts.js';
import type { ClusterFacts } from '../../model/facts.js';
import type { Omission } from '../plan/limits.js';
import {
  CLUSTER_MESSAGE_MAX,
  QUOTED_ERROR_MAX,
  countOf,
  describedFirst,
  namedFirst,
  truncateText,
} from '../../manager/runtime/summary.js';
import type { TargetOutcome } from '../apply/record-sets.js';

export type { TargetOutcome };

export interface StatusInput {
  generation: number | undefined;
  previous: GatewayDNSStatus | undefined;
  facts: ClusterFacts[];
  conflict: ConflictResult;
  targets: TargetOutcome[];
  now: Date;
  /** What the record set left out to stay within DNS and etcd limits. */
  omitted?: Omission[];
  /** The custom host names asked for: which are served, which not and why. */
  hostnames?: HostnameResult;
}

export function statusFor(input: StatusInput): GatewayDNSStatus {
  const clusters: ClusterStatus[] = [...input.facts]
    .sort((a, b) => a.cluster.localeCompare(b.cluster))
    .map((f) => ({
      cluster: f.cluster,
      state: f.state,
      ...(f.message ? { message: truncateText(f.message, CLUSTER_MESSAGE_MAX) } : {}),
      ...(f.totalEndpoints !== undefined
        ? { readyEndpoints: f.readyEndpoints ?? 0, totalEndpoints: f.totalEndpoints }
        : {}),
      ...(f.addresses.length ? { addresses: f.addresses } : {}),
      ...(f.error ? { lastError: truncateText(f.error, CLUSTER_MESSAGE_MAX) } : {}),
      ...(f.lastSeen ? { lastSeen: f.lastSeen } : {}),
    }));
  return {
    observedGeneration: input.generation,
    selectedClusters: input.facts.length,
    conditions: delegatedCondition(
      input,
      hostnamesCondition(
        input,
        setCondition(
          input.previous?.conditions,
          { type: READY, ...readyCondition(input), observedGeneration: input.generation },
          input.now,
        ),
      ),
    ),
    clusters,
    // What the DNSZones' status reads: which namespace holds which custom name (ADR 0213).
    // Emptied rather than left out once it had names: the status is written as a merge patch.
    ...(input.hostnames?.served.length || input.previous?.hostnames?.length
      ? { hostnames: [...(input.hostnames?.served ?? [])] }
      : {}),
  };
}

/**
 * NamesDelegated, while custom names are served: whether a DNSZone's delegation, rather than the
 * first claim from any namespace, decides who has them, so the unsafe mode shows on each object.
 */
function delegatedCondition(input: StatusInput, conditions: ReturnType<typeof setCondition>) {
  const asked = input.hostnames;
  if (!asked?.served.length) return removeCondition(conditions, NAMES_DELEGATED);
  const firstClaim = asked.firstClaimZones ?? [];
  const audited = asked.audited ?? [];
  const notes = [
    ...(audited.length
      ? [`enforcement would withdraw: ${namedFirst(audited.map((a) => `${a.name} (${a.reason})`))}`]
      : []),
    ...(firstClaim.length
      ? [`zone ${namedFirst(firstClaim)} has no DNSZone: its names go to the oldest claim from any namespace`]
      : []),
  ];
  const condition: Omit<ConditionInput, 'type'> = notes.length
    ? {
        status: 'False',
        reason: audited.length ? DELEGATION_REASONS.Audit : DELEGATION_REASONS.FirstClaim,
        message: notes.join('; '),
      }
    : {
        status: 'True',
        reason: DELEGATION_REASONS.Delegated,
        message: `delegated to this namespace: ${namedFirst(asked.served)}`,
      };
  return setCondition(
    conditions,
    { type: NAMES_DELEGATED, ...condition, observedGeneration: input.generation },
    input.now,
  );
}

/**
 * HostnamesAccepted, while custom host names are asked for: where a user looks for a name that is
 * not served (kubectl wait, a dashboard of conditions), not only in Ready's message. As with the
 * generated names, a name an older GatewayDNS holds is a Conflict (Ready=False/Conflict too); a
 * name no GatewayDNS may have is Invalid (Ready stays True: the rest is served).
 */
function hostnamesCondition(input: StatusInput, conditions: ReturnType<typeof setCondition>) {
  const asked = input.hostnames;
  if (!asked || (!asked.served.length && !asked.refused.length))
    return removeCondition(conditions, HOSTNAMES_ACCEPTED);
  const conflicts = asked.refused.filter((r) => r.kind === 'Conflict');
  const condition: Omit<ConditionInput, 'type'> = !asked.refused.length
    ? {
        status: 'True',
        reason: HOSTNAME_REASONS.Accepted,
        message: `served: ${namedFirst(asked.served)}`,
      }
    : {
        status: 'False',
        reason: conflicts.length
          ? HOSTNAME_REASONS.Conflict
          : asked.refused.some((r) => r.kind === 'NotDelegated')
            ? HOSTNAME_REASONS.NotDelegated
            : HOSTNAME_REASONS.Invalid,
        message: `not served: ${refusedNames(asked.refused)}${asked.served.length ? `; served: ${namedFirst(asked.served)}` : ''}`,
      };
  return setCondition(
    conditions,
    { type: HOSTNAMES_ACCEPTED, ...condition, observedGeneration: input.generation },
    input.now,
  );
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
  reason: typeof REASONS.Invalid | typeof REASONS.NamespaceNotAllowed = REASONS.Invalid,
): GatewayDNSStatus {
  return {
    ...previous,
    observedGeneration: generation,
    conditions: setCondition(
      previous?.conditions,
      { type: READY, status: 'False', reason, message, observedGeneration: generation },
      now,
    ),
  };
}

/**
 * The Ready condition with the most useful reason first: what stops the
 * GatewayDNS from serving anything at all (no cluster selected, the Service
 * nowhere, no addresses anywhere) comes before a name conflict, which only
 * matters once there is something to publish, and before unreachable
 * clusters, whose last known addresses are still published. Every list in
 * the message names its first few items and counts the rest, so the message
 * is as long for 1,000 clusters as for 4; status.clusters[] has each one.
 */
function readyCondition(input: StatusInput): Omit<ConditionInput, 'type'> {
  const { facts, conflict, targets } = input;
  const heldHostnames = (input.hostnames?.refused ?? []).filter((h) => h.kind === 'Conflict');
  const conflictNote =
    [
      ...(conflict.lostDomains.length
        ? [
            `names ${namedFirst(conflict.lostDomains)} are already claimed by gatewaydns ${namedFirst(conflict.with)}; they are left out`,
          ]
        : []),
      ...(heldHostnames.length ? [`hostnames not served: ${refusedNames(heldHostnames)}`] : []),
    ].join('; ') || undefined;
  if (!facts.length)
    return {
      status: 'False',
      reason: REASONS.NoClustersSelected,
      message: 'the selector matches no Cluster',
    };
  // Nothing to publish, and every selected cluster answered: its own answer is the first problem.
  const reachable = facts.every((f) => f.state !== 'Unreachable');
  if (reachable && !facts.some((f) => f.addresses.length)) {
    const headless = facts.filter((f) => f.state === 'HeadlessService').map((f) => f.cluster);
    if (headless.length)
      return {
        status: 'False',
        reason: REASONS.HeadlessService,
        message: [
          `the Service is headless in ${namedFirst(headless)}: resolutionType clusterIP has no cluster IP to publish there; use resolutionType: headless`,
          ...(conflictNote ? [conflictNote] : []),
        ].join('; '),
      };
    if (facts.some((f) => f.state === 'GatewayNotFound' || f.state === 'GatewayNotProgrammed')) {
      const missing = facts.every((f) => f.state === 'GatewayNotFound');
      return {
        status: 'False',
        reason: missing ? REASONS.GatewayNotFound : REASONS.GatewayNotProgrammed,
        message: [
          missing
            ? `the Gateway exists in none of the selected clusters (${namedFirst(facts.map((f) => `${f.cluster}${f.message ? `: ${f.message}` : ''}`))})`
            : `no selected cluster's Gateway is Programmed with an address (${namedFirst(facts.map((f) => `${f.cluster}: ${f.state}`))})`,
          ...(conflictNote ? [conflictNote] : []),
        ].join('; '),
      };
    }
    const notFound = facts.every((f) => f.state === 'ServiceNotFound');
    const first = notFound
      ? `the Service exists in none of the selected clusters (${namedFirst(facts.map((f) => f.cluster))})`
      : `no selected cluster gives the Service an address yet (${namedFirst(facts.map((f) => `${f.cluster}: ${f.state}`))})`;
    return {
      status: 'False',
      reason: notFound ? REASONS.ServiceNotFound : REASONS.NoAddresses,
      message: [first, ...(conflictNote ? [conflictNote] : [])].join('; '),
    };
  }
  if (conflictNote) return { status: 'False', reason: REASONS.Conflict, message: conflictNote };
  const unreachableSources = facts.filter((f) => f.state === 'Unreachable');
  const failedTargets = targets.filter((t) => t.result === 'failed');
  if (unreachableSources.length || failedTargets.length) {
    const quote = (error: string | undefined, fallback: string) =>
      truncateText(error ?? fallback, QUOTED_ERROR_MAX);
    const parts = [
      ...(unreachableSources.length
        ? [
            `${countOf(unreachableSources.length, facts.length, 'selected cluster')} unreachable, last known addresses kept: ${describedFirst(
              unreachableSources.map((f) => `${f.cluster} (source: ${quote(f.error, 'unreachable')})`),
            )}`,
          ]
        : []),
      ...(failedTargets.length
        ? [
            `${countOf(failedTargets.length, targets.length, 'workload cluster')} not written: ${describedFirst(
              failedTargets.map((t) => `${t.cluster} (target: ${quote(t.error, 'failed')})`),
            )}`,
          ]
        : []),
    ];
    return { status: 'False', reason: REASONS.ClusterUnreachable, message: parts.join('; ') };
  }
  const ready = facts.filter((f) => f.state === 'Ready').map((f) => f.cluster);
  const isFrozen = (f: ClusterFacts) =>
    f.state === 'Paused' || f.state === 'Deleting' || f.state === 'Provisioning';
  const frozen = facts.filter(isFrozen).map((f) => `${f.cluster} (${f.state})`);
  const others = facts
    .filter((f) => f.state !== 'Ready' && !isFrozen(f))
    .map((f) => `${f.cluster}: ${f.state}`);
  const written = targets.filter((t) => t.result === 'written' || t.result === 'current').length;
  const invalidHostnames = (input.hostnames?.refused ?? []).filter((h) => h.kind !== 'Conflict');
  const parts = [
    `addresses of ${namedFirst(ready)} published to ${written} workload cluster(s)`,
    ...(others.length ? [`not published: ${namedFirst(others)}`] : []),
    ...(frozen.length ? [`kept as last published: ${namedFirst(frozen)}`] : []),
    ...(input.omitted?.length ? [omissionMessage(input.omitted)] : []),
    ...(invalidHostnames.length ? [`hostnames not served: ${refusedNames(invalidHostnames)}`] : []),
    ...(conflict.with.length
      ? [
          `newer gatewaydns ${namedFirst(conflict.with)} claim some of the same names and leave them to this one`,
        ]
      : []),
  ];
  return { status: 'True', reason: REASONS.Ready, message: parts.join('; ') };
}

/** The first few omissions in full, then a count: a message stays readable for a 10,000-pod Service. */
function omissionMessage(omitted: Omission[]): string {
  const shown = omitted
    .slice(0, 5)
    .map((o) => `${o.name} ${o.type}: ${o.kept} of ${o.total} values (${o.reason})`);
  const more = omitted.length > shown.length ? `; and ${omitted.length - shown.length} more records` : '';
  return `left out to stay within limits: ${shown.join('; ')}${more}`;
}

/** Refused host names for a message: the first few with why, and how many more. */
function refusedNames(refused: HostnameResult['refused']): string {
  return namedFirst(refused.map((h) => `${h.name} (${truncateText(h.reason, QUOTED_ERROR_MAX)})`));
}
