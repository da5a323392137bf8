// Pure: the health view (health-view.ts) → the GatewayDNS status people read:
// each candidate cluster's health as seen from the workload clusters
// (status.clusters[].health: "healthy from 9 of 10") and the Degraded
// condition naming which clusters failed over from which tier to which. Every
// list in it names its first few and counts the rest, so it is as long at
// 1,000 clusters as at 4 (issue 23's rule).
import type { GatewayDNSStatus } from '../../../api/index.js';
import {
  DEGRADED,
  DEGRADED_REASONS,
  removeCondition,
  setCondition,
  type ConditionInput,
} from '../../model/conditions.js';
import type { WhenNoneHealthy } from '../../../api/index.js';
import {
  QUOTED_ERROR_MAX,
  countOf,
  describedFirst,
  namedFirst,
  truncateText,
} from '../../manager/runtime/summary.js';
import type { HealthView, VantageChoice } from './health-view.js';

/** Clusters named in status.clusters[].health.unhealthyFrom at most; the count says how many in all. */
export const UNHEALTHY_FROM_NAMED = 5;

export function withHealthStatus(
  status: GatewayDNSStatus,
  view: HealthView | undefined,
  whenNoneHealthy: WhenNoneHealthy | undefined,
  generation: number | undefined,
  now: Date,
): GatewayDNSStatus {
  if (!view) return { ...status, conditions: removeCondition(status.conditions, DEGRADED) };
  const reporting = view.vantages.length;
  const clusters = status.clusters?.map((c) => {
    const health = view.candidates.get(c.cluster);
    if (!health || !reporting) return c;
    return {
      ...c,
      health: {
        healthyFrom: health.healthyFrom,
        reportingClusters: reporting,
        ...(health.unhealthyFrom.length
          ? { unhealthyFrom: health.unhealthyFrom.slice(0, UNHEALTHY_FROM_NAMED) }
          : {}),
      },
    };
  });
  return {
    ...status,
    ...(clusters ? { clusters } : {}),
    conditions: setCondition(
      status.conditions,
      { type: DEGRADED, ...degradedCondition(view, whenNoneHealthy), observedGeneration: generation },
      now,
    ),
  };
}

function degradedCondition(
  view: HealthView,
  whenNoneHealthy: WhenNoneHealthy | undefined,
): Omit<ConditionInput, 'type'> {
  const reporting = view.vantages.length;
  const total = reporting + view.silent.length + view.errors.length;
  const notes = [
    ...(view.silent.length ? [`no report yet from ${namedFirst(view.silent)}`] : []),
    ...(view.errors.length
      ? [
          `reports not read from ${describedFirst(
            view.errors.map((e) => `${e.cluster} (${truncateText(e.error, QUOTED_ERROR_MAX)})`),
          )}`,
        ]
      : []),
  ];
  if (!reporting)
    return {
      status: 'Unknown',
      reason: DEGRADED_REASONS.NoReports,
      message: [`no dns-server has reported its probes yet (${total} workload cluster(s))`, ...notes].join(
        '; ',
      ),
    };
  const unhealthy = [...view.candidates]
    .filter(([, h]) => h.unhealthyFrom.length)
    .map(
      ([cluster, h]) =>
        `${cluster} unhealthy from ${countOf(h.unhealthyFrom.length, reporting, 'reporting cluster')} (${namedFirst(h.unhealthyFrom)})`,
    );
  if (!unhealthy.length)
    return {
      status: 'False',
      reason: DEGRADED_REASONS.AllHealthy,
      message: [
        `every candidate is healthy from ${countOf(reporting, total, 'workload cluster')}, each answering from its first tier`,
        ...notes,
      ].join('; '),
    };
  const noneHealthy = view.vantages.filter((v) => v.answering === undefined).map((v) => v.cluster);
  const failedOver = view.vantages.filter((v) => v.answering !== undefined && v.answering > v.first);
  const parts = [
    describedFirst(unhealthy),
    ...failoverGroups(failedOver),
    ...(noneHealthy.length
      ? [
          `no candidate healthy from ${namedFirst(noneHealthy)}: ${
            whenNoneHealthy === 'answerNone'
              ? 'answering no address (whenNoneHealthy: answerNone)'
              : 'answering every address (whenNoneHealthy: answerAll)'
          }`,
        ]
      : []),
    ...notes,
  ];
  return {
    status: 'True',
    reason: noneHealthy.length
      ? DEGRADED_REASONS.NoneHealthy
      : failedOver.length
        ? DEGRADED_REASONS.FailedOver
        : DEGRADED_REASONS.Unhealthy,
    message: parts.join('; '),
  };
}

/** "failed over from tier 0 to tier 1 (cluster-c) in cluster-b, cluster-d": one part per move. */
function failoverGroups(failedOver: readonly VantageChoice[]): string[] {
  const groups = new Map<string, string[]>();
  for (const v of failedOver) {
    const move = `from tier ${v.first} to tier ${v.answering} (${namedFirst(v.answeringClusters)})`;
    groups.set(move, [...(groups.get(move) ?? []), v.cluster]);
  }
  const parts = [...groups].map(([move, where]) => `failed over ${move} in ${namedFirst(where)}`);
  return parts.length > 3 ? [...parts.slice(0, 3), `and ${parts.length - 3} more failovers`] : parts;
}
