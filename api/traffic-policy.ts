// The traffic policy's contract between the operator and the dns-servers: a
// GatewayDNS's failover tiers, weights and health check become, on each record
// of a cluster-independent name, the policy of that candidate (one source
// cluster's addresses). Every dns-server decides from them and its own probes
// which candidates answer (ADR 0209).
import { GATEWAYDNS_CRD_SPEC_SCHEMA } from './generated/gatewaydns-spec-schema.js';

const CHECK_FIELDS = GATEWAYDNS_CRD_SPEC_SCHEMA.properties.healthCheck.properties;

export const HEALTH_CHECK_PROTOCOLS = CHECK_FIELDS.protocol.enum;
export type HealthCheckProtocol = (typeof HEALTH_CHECK_PROTOCOLS)[number];
export const WHEN_NONE_HEALTHY = GATEWAYDNS_CRD_SPEC_SCHEMA.properties.whenNoneHealthy.enum;
export type WhenNoneHealthy = (typeof WHEN_NONE_HEALTHY)[number];

export const DEFAULT_HEALTH_CHECK = {
  protocol: CHECK_FIELDS.protocol.default as HealthCheckProtocol,
  periodSeconds: CHECK_FIELDS.periodSeconds.default as number,
  timeoutSeconds: CHECK_FIELDS.timeoutSeconds.default as number,
  failureThreshold: CHECK_FIELDS.failureThreshold.default as number,
  successThreshold: CHECK_FIELDS.successThreshold.default as number,
};
export const DEFAULT_WHEN_NONE_HEALTHY = GATEWAYDNS_CRD_SPEC_SCHEMA.properties.whenNoneHealthy
  .default as WhenNoneHealthy;
/** A cluster's weight when no entry of spec.weights matches it. */
export const DEFAULT_WEIGHT = 1;

/** GatewayDNS spec.healthCheck as written (the CRD fills in the defaults). */
export interface HealthCheckSpec {
  protocol?: HealthCheckProtocol;
  port?: number;
  path?: string;
  host?: string;
  periodSeconds?: number;
  timeoutSeconds?: number;
  failureThreshold?: number;
  successThreshold?: number;
}

/** A check as a dns-server runs it: every field known. */
export interface HealthCheck {
  protocol: HealthCheckProtocol;
  port: number;
  path?: string;
  host?: string;
  periodSeconds: number;
  timeoutSeconds: number;
  failureThreshold: number;
  successThreshold: number;
}

/** On a record of a cluster-independent name: which candidate its values are. */
export interface RecordPolicy {
  /** The source cluster, "namespace/name". */
  cluster: string;
  /** 0 first. */
  tier: number;
  /** Unset: the tier's candidates answer together; set: one candidate per answer, drawn by weight. */
  weight?: number;
  healthCheck?: HealthCheck;
  whenNoneHealthy?: WhenNoneHealthy;
}

/**
 * What one probe target is, the same for every record that asks for it: a dns-server probes an
 * address with a check once, whatever number of names publish it.
 */
export function probeTargetId(address: string, check: HealthCheck): string {
  const scheme = check.protocol.toLowerCase();
  const host = address.includes(':') ? `[${address}]` : address;
  const extra =
    check.protocol === 'TCP' ? '' : `${check.path ?? '/'}${check.host ? ` host=${check.host}` : ''}`;
  return `${scheme}://${host}:${check.port}${extra} every ${check.periodSeconds}s timeout ${check.timeoutSeconds}s ${check.failureThreshold}/${check.successThreshold}`;
}

/** A candidate as the tier choice sees it: one source cluster's addresses, its tier and its check. */
export interface TierCandidate {
  /** 0 first. */
  tier: number;
  addresses: readonly string[];
  /** Unset: its addresses are not probed, and every one answers. */
  healthCheck?: HealthCheck;
}

/** Which candidates answer, each array index for index with the candidates given. */
export interface TierChoice {
  /** The first tier with a healthy candidate; undefined when none is healthy. */
  tier: number | undefined;
  /** Of each candidate's addresses, index for index: whether it answers (no probe found it unhealthy). */
  answers: boolean[][];
  /** Whether each candidate is healthy: one of its addresses answers. */
  healthy: boolean[];
  /** Whether each candidate answers: healthy and of the chosen tier. */
  answering: boolean[];
}

/**
 * The first tier with a healthy candidate answers (ADR 0209). A candidate is healthy while one of
 * its addresses is; an address is healthy unless a probe found it unhealthy (one not probed yet,
 * or without a check, counts as healthy: fail open). What answers when none is healthy
 * (whenNoneHealthy) and how weights draw within the tier is the dns-server's, not this choice's.
 * The dns-server answers by it; the operator shows by it what each dns-server answers.
 */
export function chooseTier(candidates: readonly TierCandidate[], unhealthy: ReadonlySet<string>): TierChoice {
  const answers = candidates.map(({ addresses, healthCheck: check }) =>
    addresses.map((address) => !check || !unhealthy.has(probeTargetId(address, check))),
  );
  const healthy = answers.map((a) => a.includes(true));
  let tier: number | undefined;
  candidates.forEach((c, i) => {
    if (healthy[i] && (tier === undefined || c.tier < tier)) tier = c.tier;
  });
  const answering = candidates.map((c, i) => healthy[i]! && c.tier === tier);
  return { tier, answers, healthy, answering };
}
