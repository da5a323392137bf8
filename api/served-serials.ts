// The SOA serial a dns-server replica serves, per zone, as it tells the
// operator: one ConfigMap per replica in the records namespace (owned by its
// Pod, so it goes with it), written when a build changes the served data, at
// most once a second. The operator shows it in DNSZone status.nameservers[]
// (ADR 0215, 0216), the lowest of a cluster's replicas. A sibling of the probe
// report (probe-report.ts), not a key in it: the two change for different
// reasons and are read by different controllers, and each watch wakes only the
// controller that needs it.
import { GROUP } from './dnsrecordset.js';

/** On each serial report ConfigMap; the operator lists by it. */
export const SERVED_SERIALS_LABEL = `${GROUP}/served-serials`;
/** The ConfigMap key holding the JSON report. */
export const SERVED_SERIALS_KEY = 'serials.json';

const OBJECT_NAME_MAX = 253;
const SERIAL_MAX = 0xffffffff;

/** The serial report of the dns-server running in Pod `podName`. */
export function servedSerialsName(podName: string): string {
  return `capi-dns-serials-${podName}`.slice(0, OBJECT_NAME_MAX).replace(/[-.]+$/, '');
}

export interface ServedSerials {
  /** By zone name (lower case, no final dot): the SOA serial this replica serves now. */
  zones: Record<string, number>;
}

export class ServedSerialsError extends Error {}

/** A report as written into the ConfigMap; throws ServedSerialsError on anything else. */
export function parseServedSerials(text: string): ServedSerials {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ServedSerialsError(`${SERVED_SERIALS_KEY} is not JSON: ${(err as Error).message}`);
  }
  const zones = (value as Partial<ServedSerials> | null)?.zones;
  if (typeof zones !== 'object' || zones === null || Array.isArray(zones))
    throw new ServedSerialsError(`${SERVED_SERIALS_KEY}: zones must be an object`);
  for (const [zone, serial] of Object.entries(zones as Record<string, unknown>))
    if (!Number.isInteger(serial) || (serial as number) < 0 || (serial as number) > SERIAL_MAX)
      throw new ServedSerialsError(`${SERVED_SERIALS_KEY}: the serial of ${zone} is not a 32-bit serial`);
  return { zones: { ...(zones as Record<string, number>) } };
}

/** The report as the ConfigMap holds it: same serials, same text. */
export function serializeServedSerials(report: ServedSerials): string {
  const zones = Object.keys(report.zones)
    .sort()
    .map((zone) => [zone, report.zones[zone]]);
  return JSON.stringify({ zones: Object.fromEntries(zones) });
}

/**
 * The serial a cluster serves a zone at, from its replicas' reports: the lowest (RFC 1982 order).
 * That is what a secondary is sure to get from any replica behind the cluster's Service; a
 * replica a change has not reached yet holds it back until it has. Undefined when no replica
 * reports the zone.
 */
export function clusterSerial(reports: readonly ServedSerials[], zone: string): number | undefined {
  let lowest: number | undefined;
  for (const r of reports) {
    const serial = r.zones[zone];
    if (serial === undefined) continue;
    if (lowest === undefined || serialBefore(serial, lowest)) lowest = serial;
  }
  return lowest;
}

/** RFC 1982 section 3.2: a is older than b (32-bit serials). */
function serialBefore(a: number, b: number): boolean {
  return a !== b && ((a < b && b - a < 2 ** 31) || (a > b && a - b > 2 ** 31));
}
