// Who may use a custom name in a zone a DNSZone governs (ADR 0213). Pure: the
// DNSZone controller (operator/zones/) checks a spec and decides the
// delegations in force; the GatewayDNS claims (gatewaydns/claims/) ask, for a
// name and a namespace, whether the zone allows it. Both read this one rule.
import {
  DEFAULT_ENFORCEMENT,
  type Delegation,
  type DNSZoneSpec,
  type EnforcedZone,
  type Enforcement,
  dnsZoneNameProblem,
} from '../../api/index.js';
import { matchesSelector } from './selector.js';

export function normalizeName(name: string): string {
  return name.trim().toLowerCase().replace(/\.+$/, '');
}

/** A DNS name as a zone may be (api/dns-name.ts, which the dns-server checks too). */
export const dnsNameProblem = dnsZoneNameProblem;

/** Whether `name` is the zone or below it. */
export function inZone(name: string, zone: string): boolean {
  return name === zone || name.endsWith(`.${zone}`);
}

/** "*.pay.apps" matches every name below pay.apps, not pay.apps itself; any other pattern only itself. */
export function patternMatches(pattern: string, name: string): boolean {
  return pattern.startsWith('*.') ? name.endsWith(pattern.slice(1)) : pattern === name;
}

/**
 * The more specific of two patterns matching one name wins: the deeper base, and at equal depth a
 * name over a wildcard (only "x.a" and "*.a" can both match a name, and never the same one: the
 * score orders patterns across names, so a narrower delegation always beats a broader one).
 */
export function specificity(pattern: string): number {
  const labels = pattern.split('.');
  return pattern.startsWith('*.') ? (labels.length - 1) * 2 : labels.length * 2 + 1;
}

export interface ZoneCheck {
  /** Refusals of the whole spec: nothing of it is put in force, the delegations in force stay. */
  errors: string[];
  /** Delegated patterns refused on their own (an equal pattern given to other namespaces keeps them). */
  refused: string[];
  /** The delegations in force when there are no errors. */
  enforced?: EnforcedZone;
}

/** What the zone decides for equal patterns: which namespaces serve names now (status.holders). */
export interface ZoneContext {
  holders: readonly { namespace: string; hostnames: readonly string[] }[];
  namespaceLabels: (namespace: string) => Record<string, string> | undefined;
}

/**
 * Checks a DNSZone spec and computes the delegations in force. The zone must be a DNS name, every
 * pattern a name or "*." and a name inside it, every delegation must name namespaces (by name or
 * selector). Of one pattern given in several delegations, the one whose namespaces already serve a
 * name it matches keeps it, or else the first in the list; the others lose that pattern, named.
 */
export function checkZoneSpec(
  spec: DNSZoneSpec,
  generation: number | undefined,
  ctx: ZoneContext,
): ZoneCheck {
  const errors: string[] = [];
  const zoneProblem = dnsNameProblem(spec.zone ?? '');
  if (zoneProblem) errors.push(`spec.zone "${spec.zone}" is not a DNS name: it ${zoneProblem}`);
  const zone = normalizeName(spec.zone ?? '');
  for (const key of ['mname', 'rname'] as const) {
    const v = spec.soa?.[key];
    const problem = v === undefined ? undefined : dnsNameProblem(v);
    if (problem) errors.push(`spec.soa.${key} "${v}" is not a DNS name: it ${problem}`);
  }
  // spec.nameServers (issue 42) and spec.nameservers.names say the same thing: one of them (ADR 0215).
  if (spec.nameServers?.length && spec.nameservers?.names?.length)
    errors.push(
      'spec.nameServers and spec.nameservers.names are both set: give the list once, in spec.nameservers.names (spec.nameServers is its older spelling)',
    );
  const nameServerField = spec.nameServers?.length ? 'spec.nameServers' : 'spec.nameservers.names';
  const nameServers = spec.nameServers?.length ? spec.nameServers : (spec.nameservers?.names ?? []);
  for (const ns of nameServers) {
    const problem = dnsNameProblem(ns);
    if (problem) errors.push(`${nameServerField}: "${ns}" is not a DNS name: it ${problem}`);
  }
  const delegations = (spec.delegations ?? []).map((d) => ({
    ...d,
    hostnames: (d.hostnames ?? []).map(normalizeName),
  }));
  delegations.forEach((d, i) => {
    if (!d.namespaces?.length && !d.namespaceSelector)
      errors.push(`delegations[${i}] names no namespace (give namespaces or a namespaceSelector)`);
    for (const pattern of d.hostnames) {
      const base = pattern.startsWith('*.') ? pattern.slice(2) : pattern;
      const problem = dnsNameProblem(base);
      if (problem)
        errors.push(`delegations[${i}]: "${pattern}" is not a name or "*." and a name: it ${problem}`);
      else if (!zoneProblem && !inZone(base, zone))
        errors.push(`delegations[${i}]: "${pattern}" is outside the zone ${zone}`);
    }
  });
  if (errors.length) return { errors, refused: [] };

  const refused: string[] = [];
  const owner = new Map<string, number>();
  for (const [pattern, indexes] of indexesByPattern(delegations)) {
    const serving = indexes.find((i) =>
      ctx.holders.some(
        (h) =>
          delegates(delegations[i]!, h.namespace, ctx.namespaceLabels(h.namespace)) &&
          h.hostnames.some((n) => patternMatches(pattern, n)),
      ),
    );
    const winner = serving ?? indexes[0]!;
    owner.set(pattern, winner);
    for (const i of indexes)
      if (i !== winner && !sameNamespaces(delegations[i]!, delegations[winner]!))
        refused.push(
          `delegations[${i}]: ${pattern} is delegated by delegations[${winner}] too (${describeNamespaces(delegations[winner]!)}), which keeps it${serving !== undefined ? ' as it serves names there' : ' as the first in the list'}`,
        );
  }
  return {
    errors,
    refused,
    enforced: {
      ...(generation !== undefined ? { generation } : {}),
      zone,
      ...(spec.soa ? { soa: spec.soa } : {}),
      ...(nameServers.length ? { nameServers: nameServers.map(normalizeName) } : {}),
      ...(spec.nameservers?.expose ? { expose: true } : {}),
      enforcement: spec.enforcement ?? DEFAULT_ENFORCEMENT,
      delegations: delegations
        .map((d, i) => ({ ...d, hostnames: d.hostnames.filter((p) => owner.get(p) === i) }))
        .filter((d) => d.hostnames.length),
    },
  };
}

function indexesByPattern(delegations: Delegation[]): Map<string, number[]> {
  const by = new Map<string, number[]>();
  delegations.forEach((d, i) => {
    for (const p of new Set(d.hostnames)) by.set(p, [...(by.get(p) ?? []), i]);
  });
  return by;
}

function sameNamespaces(a: Delegation, b: Delegation): boolean {
  return (
    JSON.stringify([a.namespaces, a.namespaceSelector]) ===
    JSON.stringify([b.namespaces, b.namespaceSelector])
  );
}

/** Whether a delegation names `namespace`, by name or by its labels. */
export function delegates(
  d: Delegation,
  namespace: string,
  labels: Record<string, string> | undefined,
): boolean {
  if (d.namespaces?.includes(namespace)) return true;
  return (
    d.namespaceSelector !== undefined && labels !== undefined && matchesSelector(d.namespaceSelector, labels)
  );
}

function describeNamespaces(d: Delegation): string {
  const parts: string[] = [];
  if (d.namespaces?.length) parts.push(`namespaces ${d.namespaces.join(', ')}`);
  if (d.namespaceSelector) parts.push(`namespaces labelled ${describeSelector(d.namespaceSelector)}`);
  return parts.join(' and ') || 'no namespace';
}

function describeSelector(s: NonNullable<Delegation['namespaceSelector']>): string {
  const parts = [
    ...Object.entries(s.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`),
    ...(s.matchExpressions ?? []).map((e) => `${e.key} ${e.operator} ${(e.values ?? []).join(',')}`.trim()),
  ];
  return parts.join(', ') || '(everything)';
}

/** A zone in force, as the claims read it: from a DNSZone's status.enforced. */
export interface GoverningZone {
  /** The DNSZone's name. */
  name: string;
  enforced: EnforcedZone;
}

export type NameVerdict =
  | { governed: false }
  | {
      governed: true;
      zone: string;
      dnsZone: string;
      enforcement: Enforcement;
      allowed: boolean;
      /** Why not, when not allowed: "zone apps.corp.internal delegates it to no namespace matching team-b". */
      message?: string;
      /** When not allowed and a delegation matches: to whom ("*.pay.apps.corp.internal is delegated to namespaces pay"). */
      delegatedTo?: string;
    };

/** The most specific zone in force that holds `name`: it alone governs the name. */
export function governingZone(name: string, zones: readonly GoverningZone[]): GoverningZone | undefined {
  return zones
    .filter((z) => inZone(name, z.enforced.zone))
    .reduce<GoverningZone | undefined>(
      (best, z) => (!best || z.enforced.zone.length > best.enforced.zone.length ? z : best),
      undefined,
    );
}

/**
 * Whether `namespace` may serve `name`: not governed (no DNSZone holds it: the flags' first-claim
 * rule), or governed and allowed by the most specific delegated pattern that matches it.
 */
export function verdictFor(
  name: string,
  namespace: string,
  labels: Record<string, string> | undefined,
  zones: readonly GoverningZone[],
): NameVerdict {
  const n = normalizeName(name);
  const zone = governingZone(n, zones);
  if (!zone) return { governed: false };
  const { enforced } = zone;
  let best: { pattern: string; delegation: Delegation } | undefined;
  for (const d of enforced.delegations)
    for (const pattern of d.hostnames)
      if (patternMatches(pattern, n) && (!best || specificity(pattern) > specificity(best.pattern)))
        best = { pattern, delegation: d };
  const base = {
    governed: true as const,
    zone: enforced.zone,
    dnsZone: zone.name,
    enforcement: enforced.enforcement,
  };
  if (best && delegates(best.delegation, namespace, labels)) return { ...base, allowed: true };
  const missing = `zone ${enforced.zone} delegates it to no namespace matching ${namespace}`;
  const delegatedTo = best
    ? `${best.pattern} is delegated to ${describeNamespaces(best.delegation)}`
    : undefined;
  return {
    ...base,
    allowed: false,
    message: delegatedTo ? `${missing}; ${delegatedTo}` : missing,
    ...(delegatedTo ? { delegatedTo } : {}),
  };
}
