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
