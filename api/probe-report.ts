// What a dns-server's probes found, as it tells the operator: one ConfigMap per
// dns-server replica in the records namespace (owned by its Pod, so it goes
// with it), written only when its view changes. The dns-server answers from its
// own view whatever becomes of the report; the report exists so that people see
// in the GatewayDNS status which clusters are unhealthy from where (ADR 0209).
import { GROUP } from './dnsrecordset.js';

/** On each report ConfigMap; the operator lists by it. */
export const PROBE_REPORT_LABEL = `${GROUP}/probe-report`;
/** The ConfigMap key holding the JSON report. */
export const PROBE_REPORT_KEY = 'report.json';
/**
 * Unhealthy targets listed at most: 2,000 ids of ~100 bytes stay far below a ConfigMap's 1 MiB. A
 * report past it says how many it left out, and the operator counts those targets as unknown.
 */
export const PROBE_REPORT_MAX_UNHEALTHY = 2000;

const OBJECT_NAME_MAX = 253;

/** The report of the dns-server running in Pod `podName`. */
export function probeReportName(podName: string): string {
  return `capi-dns-probes-${podName}`.slice(0, OBJECT_NAME_MAX).replace(/[-.]+$/, '');
}

export interface UnhealthyTarget {
  /** probeTargetId() of the address and check. */
  target: string;
  /** When it turned unhealthy (RFC 3339). */
  since: string;
}

export interface ProbeReport {
  /** Targets this replica probes. */
  probing: number;
  /** Sorted by target. */
  unhealthy: UnhealthyTarget[];
  /** Unhealthy targets left out past PROBE_REPORT_MAX_UNHEALTHY. */
  omitted?: number;
}

export class ProbeReportError extends Error {}

/** A report as written into the ConfigMap; throws ProbeReportError on anything else. */
export function parseProbeReport(text: string): ProbeReport {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ProbeReportError(`${PROBE_REPORT_KEY} is not JSON: ${(err as Error).message}`);
  }
  const report = value as Partial<ProbeReport> | null;
  if (typeof report !== 'object' || report === null || Array.isArray(report))
    throw new ProbeReportError(`${PROBE_REPORT_KEY} is not an object`);
  if (!Number.isInteger(report.probing) || (report.probing as number) < 0)
    throw new ProbeReportError(`${PROBE_REPORT_KEY}: probing must be a count`);
  if (!Array.isArray(report.unhealthy))
    throw new ProbeReportError(`${PROBE_REPORT_KEY}: unhealthy must be a list`);
  for (const u of report.unhealthy as unknown[]) {
    const entry = u as Partial<UnhealthyTarget> | null;
    if (typeof entry?.target !== 'string' || typeof entry.since !== 'string')
      throw new ProbeReportError(`${PROBE_REPORT_KEY}: each unhealthy entry needs a target and a since`);
  }
  if (report.omitted !== undefined && (!Number.isInteger(report.omitted) || report.omitted < 0))
    throw new ProbeReportError(`${PROBE_REPORT_KEY}: omitted must be a count`);
  return {
    probing: report.probing as number,
    unhealthy: report.unhealthy.map((u) => ({ target: u.target, since: u.since })),
    ...(report.omitted ? { omitted: report.omitted } : {}),
  };
}

/** The report as the ConfigMap holds it: unchanged content, unchanged text. */
export function serializeProbeReport(report: ProbeReport): string {
  return JSON.stringify({
    probing: report.probing,
    unhealthy: [...report.unhealthy].sort((a, b) => (a.target < b.target ? -1 : a.target > b.target ? 1 : 0)),
    ...(report.omitted ? { omitted: report.omitted } : {}),
  });
}
