// Two GatewayDNS of one namespace asking for the same generated domain: the
// rule that decides which keeps it (pure).
import { clusterGatewayDomain, namespaceGatewayDomain } from '../../../api/index.js';
import type { EffectiveSpec } from '../../model/validate.js';

/** The domains a GatewayDNS answers for, given the clusters it selects: what two of them may not share. */
export function claimedDomains(
  namespace: string,
  spec: Pick<EffectiveSpec, 'gatewayLabel'>,
  selectedClusters: string[],
  suffix: string,
): string[] {
  if (!selectedClusters.length) return [];
  return [
    ...selectedClusters.map((c) => clusterGatewayDomain(spec.gatewayLabel, c, namespace, suffix)),
    namespaceGatewayDomain(spec.gatewayLabel, namespace, suffix),
  ].sort();
}

export interface Claim {
  name: string;
  /** RFC 3339; the older claim keeps a contested domain. */
  createdAt: string;
  domains: string[];
}

export interface ConflictResult {
  /** Domains this GatewayDNS must leave out, because an older one claims them. */
  lostDomains: string[];
  /** Names of the GatewayDNS objects it conflicts with (either way). */
  with: string[];
}

/**
 * Two GatewayDNS in one namespace must not produce the same name: the older
 * (then alphabetically first) keeps a contested domain, the other leaves it out,
 * so neither overwrites the other and both report the conflict.
 */
export function conflictsFor(self: Claim, others: Claim[]): ConflictResult {
  const lost = new Set<string>();
  const withNames = new Set<string>();
  const mine = new Set(self.domains);
  for (const other of others) {
    if (other.name === self.name) continue;
    const shared = other.domains.filter((d) => mine.has(d));
    if (!shared.length) continue;
    withNames.add(other.name);
    const otherWins =
      other.createdAt < self.createdAt || (other.createdAt === self.createdAt && other.name < self.name);
    if (otherWins) shared.forEach((d) => lost.add(d));
  }
  return { lostDomains: [...lost].sort(), with: [...withNames].sort() };
}
