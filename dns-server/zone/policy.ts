// The traffic policy at one name and type, pure: the candidates the record
// sets give (each one source cluster's addresses, its tier, weight and check)
// and what this dns-server's probes say → the values it answers with, as one
// answer or as variants drawn by weight (ADR 0209). Decided when the records
// or the health view change, never per query.
import {
  chooseTier,
  probeTargetId,
  type HealthCheck,
  type RecordPolicy,
  type WhenNoneHealthy,
} from '../../api/index.js';
import type { RData } from './rr.js';

export interface Candidate {
  cluster: string;
  tier: number;
  weight?: number;
  check?: HealthCheck;
  whenNoneHealthy?: WhenNoneHealthy;
  /** Presentation forms of the values (addresses), index for index with `data`. */
  keys: string[];
  data: RData[];
}

/** One way to answer: these values, drawn with this weight among the variants. */
export interface Variant {
  keys: string[];
  data: RData[];
  weight: number;
}

/** An address probed with a check: what the prober keeps state for. */
export interface ProbeTarget {
  id: string;
  address: string;
  check: HealthCheck;
}

/** Which probe targets are unhealthy now (all others, probed or not yet, count as healthy: fail open). */
export type Unhealthy = ReadonlySet<string>;

export interface Choice {
  /** Empty: answer no value (answerNone with none healthy). One: the answer. More: drawn by weight. */
  variants: Variant[];
  /** The tier that answers; undefined when none is healthy. */
  tier: number | undefined;
}

/** A record's policy as a candidate of its values. */
export function candidateOf(policy: RecordPolicy, keys: string[], data: RData[]): Candidate {
  return {
    cluster: policy.cluster,
    tier: policy.tier,
    ...(policy.weight !== undefined ? { weight: policy.weight } : {}),
    ...(policy.healthCheck ? { check: policy.healthCheck } : {}),
    ...(policy.whenNoneHealthy ? { whenNoneHealthy: policy.whenNoneHealthy } : {}),
    keys,
    data,
  };
}

/** Every address a candidate asks to probe, once per address and check. */
export function probeTargetsOf(candidates: readonly Candidate[], into: Map<string, ProbeTarget>): void {
  for (const c of candidates) {
    if (!c.check) continue;
    for (const address of c.keys) {
      const id = probeTargetId(address, c.check);
      if (!into.has(id)) into.set(id, { id, address, check: c.check });
    }
  }
}

/**
 * The first tier with a healthy candidate answers (api/traffic-policy.ts, chooseTier): with weights,
 * one candidate per answer drawn by weight (weight 0 only when no other of the tier is healthy);
 * without, the tier's healthy addresses together. Only healthy addresses are answered. None
 * healthy: every candidate's addresses (answerAll, fail open) or none.
 */
export function choose(candidates: readonly Candidate[], unhealthy: Unhealthy): Choice {
  const { tier, answers, answering } = chooseTier(
    candidates.map((c) => ({ tier: c.tier, addresses: c.keys, healthCheck: c.check })),
    unhealthy,
  );
  if (tier === undefined) {
    // Fail open unless every candidate asks for an empty answer.
    const none = candidates.length > 0 && candidates.every((c) => c.whenNoneHealthy === 'answerNone');
    return { variants: none ? [] : [union(candidates, 1)], tier: undefined };
  }
  const inTier = byCluster(
    candidates.flatMap((c, i) => {
      if (!answering[i]) return [];
      const keep = answers[i]!;
      return [{ ...c, keys: c.keys.filter((_, k) => keep[k]), data: c.data.filter((_, k) => keep[k]) }];
    }),
  );
  if (!inTier.some((c) => c.weight !== undefined)) return { variants: [union(inTier, 1)], tier };
  const weighted = inTier.filter((c) => (c.weight ?? 1) > 0);
  const drawn = weighted.length ? weighted : inTier.map((c) => ({ ...c, weight: 1 }));
  // One candidate answering, or equal weights that draw the same set: one answer, no draw.
  if (drawn.length === 1) return { variants: [union(drawn, 1)], tier };
  return {
    variants: drawn.map((c) => ({ keys: c.keys, data: c.data, weight: c.weight ?? 1 })),
    tier,
  };
}

/** The values of several candidates (or variants) as one variant, each value once. */
export function union(candidates: readonly Pick<Candidate, 'keys' | 'data'>[], weight: number): Variant {
  const keys: string[] = [];
  const data: RData[] = [];
  const seen = new Set<string>();
  for (const c of candidates)
    c.keys.forEach((k, i) => {
      if (seen.has(k)) return;
      seen.add(k);
      keys.push(k);
      data.push(c.data[i]!);
    });
  return { keys, data, weight };
}

/** One candidate per cluster (a cluster's values may come from more than one record set). */
function byCluster(candidates: readonly Candidate[]): Candidate[] {
  const out = new Map<string, Candidate>();
  for (const c of candidates) {
    const known = out.get(c.cluster);
    if (!known) out.set(c.cluster, c);
    else {
      const merged = union([known, c], 1);
      out.set(c.cluster, { ...known, keys: merged.keys, data: merged.data });
    }
  }
  return [...out.values()].sort((a, b) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0));
}

/**
 * A draw table: each variant's index repeated in proportion to its weight, `size` entries at most,
 * so that a query's draw is one random index (the hot path does nothing else).
 */
export function drawTable(weights: readonly number[], size = 1000): number[] {
  const total = weights.reduce((a, b) => a + b, 0);
  const scale = total > size ? size / total : 1;
  const table: number[] = [];
  weights.forEach((w, i) => {
    const n = w > 0 ? Math.max(1, Math.round(w * scale)) : 0;
    for (let k = 0; k < n; k++) table.push(i);
  });
  return table;
}
