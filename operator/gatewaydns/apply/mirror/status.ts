// Pure: what the mirror came to in each workload cluster → status.mirrors and
// the Mirrored condition, added to the status the GatewayDNS reconciler
// computed. Unchanged input gives an equal status, so nothing is rewritten.
import type { GatewayDNSStatus, MirrorClusterStatus } from '../../../../api/index.js';
import { MIRRORED, MIRROR_REASONS, setCondition, type ConditionInput } from '../../../model/conditions.js';
import type { MirrorOutcome } from './writer.js';
import {
  CLUSTER_MESSAGE_MAX,
  QUOTED_ERROR_MAX,
  describedFirst,
  namedFirst,
  truncateText,
} from '../../../manager/runtime/summary.js';

export interface MirrorResult {
  /** "namespace/name" of the mirror Service. */
  service: string;
  outcomes: MirrorOutcome[];
  /** Source clusters that did not answer: their last known endpoints stay in the mirrors. */
  unreachableSources: string[];
}

/**
 * `status` with the mirror's part: the list and the condition when spec.mirror
 * is set; without it, no condition and an empty list where one was (a merge
 * patch keeps a field that is left out).
 */
export function withMirrorStatus(
  status: GatewayDNSStatus,
  previous: GatewayDNSStatus | undefined,
  result: MirrorResult | undefined,
  generation: number | undefined,
  now: Date,
): GatewayDNSStatus {
  if (!result) {
    const conditions = status.conditions?.filter((c) => c.type !== MIRRORED);
    return {
      ...status,
      ...(conditions ? { conditions } : {}),
      ...(previous?.mirrors !== undefined || status.mirrors !== undefined ? { mirrors: [] } : {}),
    };
  }
  const mirrors: MirrorClusterStatus[] = [...result.outcomes]
    .sort((a, b) => a.cluster.localeCompare(b.cluster))
    .map((o) => ({
      cluster: o.cluster,
      state: o.state,
      service: o.service,
      ...(o.message ? { message: truncateText(o.message, CLUSTER_MESSAGE_MAX) } : {}),
      ...(o.endpointSlices !== undefined ? { endpointSlices: o.endpointSlices } : {}),
    }));
  return {
    ...status,
    conditions: setCondition(
      status.conditions,
      { type: MIRRORED, ...mirroredCondition(result), observedGeneration: generation },
      now,
    ),
    mirrors,
  };
}

function mirroredCondition(result: MirrorResult): Omit<ConditionInput, 'type'> {
  const list = (state: string) => result.outcomes.filter((o) => o.state === state);
  const describe = (os: MirrorOutcome[]) =>
    describedFirst(os.map((o) => `${o.cluster}: ${truncateText(o.message ?? o.state, QUOTED_ERROR_MAX)}`));
  const conflicts = list('Conflict');
  if (conflicts.length)
    return { status: 'False', reason: MIRROR_REASONS.Conflict, message: describe(conflicts) };
  const failed = list('Failed');
  if (failed.length) return { status: 'False', reason: MIRROR_REASONS.Failed, message: describe(failed) };
  const inPlace = list('InPlace');
  const unreachableConsumers = list('Unreachable');
  const unreachableSources = result.unreachableSources;
  if (unreachableConsumers.length || unreachableSources.length) {
    const parts = [
      ...(unreachableConsumers.length
        ? [
            `unreachable: ${describedFirst(
              unreachableConsumers.map(
                (o) =>
                  `${o.cluster} (consumer: ${truncateText(o.message ?? 'unreachable', QUOTED_ERROR_MAX)})`,
              ),
            )}`,
          ]
        : []),
      ...(unreachableSources.length
        ? [`unreachable: ${namedFirst(unreachableSources)} (source: last known endpoints kept)`]
        : []),
      `mirror ${result.service} in place in ${inPlace.length} cluster(s)`,
    ];
    return { status: 'False', reason: MIRROR_REASONS.ClusterUnreachable, message: parts.join('; ') };
  }
  const noSource = list('NoSource');
  if (noSource.length && !inPlace.length)
    return {
      status: 'False',
      reason: MIRROR_REASONS.NoSource,
      message: truncateText(noSource[0]?.message ?? 'no source', QUOTED_ERROR_MAX * 4),
    };
  if (!inPlace.length)
    return {
      status: 'False',
      reason: MIRROR_REASONS.NoConsumers,
      message: `no workload cluster consumes mirror ${result.service} (${describe(result.outcomes) || 'no workload clusters'})`,
    };
  const notes = inPlace
    .filter((o) => o.message)
    .map((o) => `${o.cluster}: ${truncateText(o.message ?? '', QUOTED_ERROR_MAX)}`);
  const others = result.outcomes.filter((o) => o.state !== 'InPlace').map((o) => `${o.cluster}: ${o.state}`);
  return {
    status: 'True',
    reason: MIRROR_REASONS.InPlace,
    message: [
      `mirror ${result.service} in place in ${namedFirst(inPlace.map((o) => o.cluster))}`,
      ...(others.length ? [`not consumers: ${namedFirst(others)}`] : []),
      ...(notes.length ? [describedFirst(notes)] : []),
    ].join('; '),
  };
}

/**
 * `status` with the mirror's part as `previous` had it: a mirror step that failed before it could
 * say anything leaves its condition and list as they were.
 */
export function withPreviousMirrorStatus(
  status: GatewayDNSStatus,
  previous: GatewayDNSStatus | undefined,
): GatewayDNSStatus {
  const kept = previous?.conditions?.find((c) => c.type === MIRRORED);
  const conditions = [
    ...(status.conditions ?? []).filter((c) => c.type !== MIRRORED),
    ...(kept ? [kept] : []),
  ];
  return {
    ...status,
    ...(conditions.length ? { conditions } : {}),
    ...(previous?.mirrors !== undefined ? { mirrors: previous.mirrors } : {}),
  };
}
