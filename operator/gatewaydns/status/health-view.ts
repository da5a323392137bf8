// Pure: the dns-servers' probe reports (api/probe-report.ts) and the
// candidates the operator published → how each candidate cluster looks from
// each workload cluster, and which tier each one answers from. The dns-servers
// decide by themselves (ADR 0209); this is only what people are shown of it,
// computed by the same tier choice (api/traffic-policy.ts, chooseTier) as
// zone/policy.ts chooses by.
import { isIP } from 'node:net';
import { chooseTier, type ProbeReport } from '../../../api/index.js';
import type { ClusterFacts } from '../../model/facts.js';
import type { EffectiveSpec } from '../../model/validate.js';
import { candidatePolicy } from '../plan/traffic-policy.js';

/** What one workload cluster's dns-server replicas reported. */
export interface VantageReports {
  cluster: string;
  /** One per replica; empty: none has reported. */
  reports: ProbeReport[];
  /** Why its reports could not be read (unreachable, forbidden, a report that is not one). */
  error?: string;
}

export interface HealthViewInput {
  namespace: string;
  spec: EffectiveSpec;
  facts: readonly ClusterFacts[];
  clusterLabels: ReadonlyMap<string, Record<string, string> | undefined>;
  vantages: readonly VantageReports[];
}

export interface CandidateHealth {
  /** Reporting workload clusters from which it is healthy. */
  healthyFrom: number;
  /** Reporting workload clusters from which it is not, sorted. */
  unhealthyFrom: string[];
}

export interface VantageChoice {
  cluster: string;
  /** The tier it answers from while every candidate is healthy. */
  first: number;
  /** The tier it answers from now; undefined: no candidate healthy. */
  answering: number | undefined;
  /** The healthy candidates of the answering tier, sorted. */
  answeringClusters: string[];
}

export interface HealthView {
  /** Candidate clusters (with addresses to probe), by name. */
  candidates: Map<string, CandidateHealth>;
  /** The workload clusters that reported, sorted. */
  vantages: VantageChoice[];
  /** Workload clusters with no report yet, sorted. */
  silent: string[];
  /** Workload clusters whose reports could not be read, and why. */
  errors: { cluster: string; error: string }[];
}

/** undefined when the GatewayDNS asks for no health check or has no candidate to probe. */
export function healthViewOf(input: HealthViewInput): HealthView | undefined {
  const { spec } = input;
  if (!spec.trafficPolicy?.healthCheck) return undefined;
  const candidates = input.facts
    .map((f) => ({ cluster: f.cluster, addresses: f.addresses.filter((a) => isIP(a) !== 0), facts: f }))
    .filter((c) => c.addresses.length)
    .sort((a, b) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0));
  if (!candidates.length) return undefined;
  const policyFor = (candidate: (typeof candidates)[number], vantage: string) =>
    candidatePolicy(spec, {
      namespace: input.namespace,
      cluster: candidate.cluster,
      labels: input.clusterLabels.get(candidate.cluster),
      probePort: candidate.facts.probePort,
      local: candidate.cluster === vantage,
    });

  const health = new Map<string, CandidateHealth>(
    candidates.map((c) => [c.cluster, { healthyFrom: 0, unhealthyFrom: [] }]),
  );
  const vantages: VantageChoice[] = [];
  const silent: string[] = [];
  const errors: HealthView['errors'] = [];
  for (const vantage of [...input.vantages].sort((a, b) => (a.cluster < b.cluster ? -1 : 1))) {
    if (vantage.error) errors.push({ cluster: vantage.cluster, error: vantage.error });
    if (!vantage.reports.length) {
      if (!vantage.error) silent.push(vantage.cluster);
      continue;
    }
    // A cluster's view: unhealthy as soon as one of its replicas finds it so.
    const unhealthy = new Set(vantage.reports.flatMap((r) => r.unhealthy.map((u) => u.target)));
    const tiered = candidates.map((c) => {
      const policy = policyFor(c, vantage.cluster);
      return { tier: policy?.tier ?? 0, addresses: c.addresses, healthCheck: policy?.healthCheck };
    });
    const choice = chooseTier(tiered, unhealthy);
    candidates.forEach((c, i) => {
      const entry = health.get(c.cluster)!;
      if (choice.healthy[i]) entry.healthyFrom++;
      else entry.unhealthyFrom.push(vantage.cluster);
    });
    vantages.push({
      cluster: vantage.cluster,
      first: Math.min(...tiered.map((c) => c.tier)),
      answering: choice.tier,
      answeringClusters: candidates.filter((_, i) => choice.answering[i]).map((c) => c.cluster),
    });
  }
  return { candidates: health, vantages, silent, errors };
}
