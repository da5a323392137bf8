// The traffic policy of one source cluster's candidate, pure: which failover
// tier its labels put it in, its weight, and the check every dns-server runs
// against its addresses. The dns-servers choose among the candidates (ADR 0209).
import type { RecordPolicy } from '../../../api/index.js';
import { DEFAULT_WEIGHT } from '../../../api/index.js';
import { matchesSelector } from '../../model/selector.js';
import type { EffectiveSpec, TrafficPolicySpec } from '../../model/validate.js';

export interface CandidateInput {
  namespace: string;
  cluster: string;
  labels: Record<string, string> | undefined;
  /** facts.probePort: the Service's first port, for a check that names none. */
  probePort: number | undefined;
  /** answer localFirst: the receiving cluster's own candidate comes first. */
  local: boolean;
}

/** The candidate's policy; undefined without a traffic policy (the plain union, as before policies existed). */
export function candidatePolicy(spec: EffectiveSpec, input: CandidateInput): RecordPolicy | undefined {
  const policy = spec.trafficPolicy;
  if (!policy) return undefined;
  const tier = tierOf(policy, input.labels);
  const check = healthCheckOf(policy, input.probePort);
  return {
    cluster: `${input.namespace}/${input.cluster}`,
    // localFirst: the own cluster is a tier before every other.
    tier: spec.answer === 'localFirst' ? (input.local ? 0 : tier + 1) : tier,
    ...(policy.weights ? { weight: weightOf(policy, input.labels) } : {}),
    ...(check ? { healthCheck: check } : {}),
    whenNoneHealthy: policy.whenNoneHealthy,
  };
}

/** The first tier whose selector matches; clusters in no tier form a last tier. */
export function tierOf(policy: TrafficPolicySpec, labels: Record<string, string> | undefined): number {
  const i = policy.tiers.findIndex((t) => matchesSelector(t.clusterSelector, labels));
  return i < 0 ? policy.tiers.length : i;
}

/** The first weight entry that matches, else DEFAULT_WEIGHT. */
export function weightOf(policy: TrafficPolicySpec, labels: Record<string, string> | undefined): number {
  return policy.weights?.find((w) => matchesSelector(w.clusterSelector, labels))?.weight ?? DEFAULT_WEIGHT;
}

function healthCheckOf(
  policy: TrafficPolicySpec,
  probePort: number | undefined,
): RecordPolicy['healthCheck'] {
  const check = policy.healthCheck;
  const port = check?.port ?? probePort;
  // No port known (a cluster known only from status after a restart): readiness alone decides for it.
  if (!check || port === undefined) return undefined;
  return {
    protocol: check.protocol,
    port,
    ...(check.path !== undefined ? { path: check.path } : {}),
    ...(check.host !== undefined ? { host: check.host } : {}),
    periodSeconds: check.periodSeconds,
    timeoutSeconds: check.timeoutSeconds,
    failureThreshold: check.failureThreshold,
    successThreshold: check.successThreshold,
  };
}
