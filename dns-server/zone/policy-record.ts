// A record's traffic policy as a record set carries it, checked: a bad one is
// reported with its record and skipped like any bad value, never served half.
import {
  HEALTH_CHECK_PROTOCOLS,
  WHEN_NONE_HEALTHY,
  type HealthCheck,
  type RecordPolicy,
} from '../../api/index.js';
import { RecordError } from './values.js';

export function parsePolicy(raw: unknown, type: string): RecordPolicy {
  if (type !== 'A' && type !== 'AAAA')
    throw new RecordError(`a ${type} record has no traffic policy (A and AAAA only)`);
  const p = object(raw, 'policy');
  if (typeof p.cluster !== 'string' || !p.cluster)
    throw new RecordError('policy.cluster is not a non-empty string');
  const tier = integer(p.tier, 'policy.tier', 0, 64);
  const weight = p.weight === undefined ? undefined : integer(p.weight, 'policy.weight', 0, 1000);
  const when = p.whenNoneHealthy;
  if (when !== undefined && !(WHEN_NONE_HEALTHY as readonly unknown[]).includes(when))
    throw new RecordError(
      `policy.whenNoneHealthy ${JSON.stringify(when)} is not one of ${WHEN_NONE_HEALTHY.join(', ')}`,
    );
  const check = p.healthCheck === undefined ? undefined : parseCheck(p.healthCheck);
  return {
    cluster: p.cluster,
    tier,
    ...(weight !== undefined ? { weight } : {}),
    ...(check ? { healthCheck: check } : {}),
    ...(when !== undefined ? { whenNoneHealthy: when as RecordPolicy['whenNoneHealthy'] } : {}),
  };
}

function parseCheck(raw: unknown): HealthCheck {
  const c = object(raw, 'policy.healthCheck');
  if (!(HEALTH_CHECK_PROTOCOLS as readonly unknown[]).includes(c.protocol))
    throw new RecordError(
      `policy.healthCheck.protocol ${JSON.stringify(c.protocol)} is not one of ${HEALTH_CHECK_PROTOCOLS.join(', ')}`,
    );
  const protocol = c.protocol as HealthCheck['protocol'];
  const periodSeconds = integer(c.periodSeconds, 'policy.healthCheck.periodSeconds', 1, 300);
  const timeoutSeconds = integer(c.timeoutSeconds, 'policy.healthCheck.timeoutSeconds', 1, 60);
  if (timeoutSeconds > periodSeconds)
    throw new RecordError('policy.healthCheck.timeoutSeconds must not exceed periodSeconds');
  const text = (v: unknown, at: string, pattern: RegExp) => {
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || !pattern.test(v))
      throw new RecordError(`${at} ${JSON.stringify(v)} is not valid`);
    return v;
  };
  // Only what goes into a request line and a Host header: no spaces, no control characters.
  const path = text(c.path, 'policy.healthCheck.path', /^\/[!-~]{0,1023}$/);
  const host = text(c.host, 'policy.healthCheck.host', /^[A-Za-z0-9]([-A-Za-z0-9.]{0,251}[A-Za-z0-9])?$/);
  if (protocol === 'TCP' && (path !== undefined || host !== undefined))
    throw new RecordError('policy.healthCheck: path and host are for HTTP and HTTPS');
  return {
    protocol,
    port: integer(c.port, 'policy.healthCheck.port', 1, 65535),
    ...(path !== undefined ? { path } : {}),
    ...(host !== undefined ? { host } : {}),
    periodSeconds,
    timeoutSeconds,
    failureThreshold: integer(c.failureThreshold, 'policy.healthCheck.failureThreshold', 1, 10),
    successThreshold: integer(c.successThreshold, 'policy.healthCheck.successThreshold', 1, 10),
  };
}

function object(raw: unknown, at: string): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new RecordError(`${at} is not an object`);
  return raw as Record<string, unknown>;
}

function integer(v: unknown, at: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw new RecordError(`${at} ${JSON.stringify(v)} is not an integer from ${min} to ${max}`);
  return v;
}
