// Custom host names (spec.hostnames, and the fqdn annotation on a Service):
// names inside the zone that answer like the cluster-independent name. Which
// of the names asked for are served, and why the others are not. Pure.
import { governingZone, verdictFor, type GoverningZone } from '../../model/delegation.js';

export interface HostnameClaim {
  /** "namespace/name" of the GatewayDNS. */
  gatewayDns: string;
  /** RFC 3339; the older claim keeps a contested name. */
  createdAt: string;
  /** spec.hostnames. */
  hostnames: string[];
  /** Names from the fqdn annotation of its Service, or from its Gateway's routes, each with where it was read. */
  annotated?: AnnotatedHostname[];
}

export interface AnnotatedHostname {
  name: string;
  /**
   * Where it was read, for a loser's status: "Service apps/db in cluster cluster-a" (the fqdn
   * annotation), "HTTPRoute shop/web in cluster cluster-a" (a route of the Gateway).
   */
  from: string;
}

export interface HostnameResult {
  served: string[];
  /**
   * Conflict: an older GatewayDNS holds the name; Invalid: no GatewayDNS may have it; NotDelegated:
   * its zone's DNSZone delegates it to no namespace matching this one's (enforcement Enforce).
   */
  refused: { name: string; reason: string; kind: 'Conflict' | 'Invalid' | 'NotDelegated' }[];
  /** Served names a DNSZone in Audit would withdraw under Enforce, and why. */
  audited?: { name: string; reason: string }[];
  /** The zones, declared by flags only, whose served names go by the first claim from any namespace. */
  firstClaimZones?: string[];
}

/** The DNSZones in force (oldest first: of two for one zone, the older governs) and the namespaces' labels. */
export interface Delegations {
  zones: readonly GoverningZone[];
  labelsOf: (namespace: string) => Record<string, string> | undefined;
}

export function normalizeHostname(name: string): string {
  return name.trim().toLowerCase().replace(/\.+$/, '');
}

/** Every name a claim asks for, spec.hostnames and annotations alike, normalized and sorted. */
export function claimedNames(claim: Pick<HostnameClaim, 'hostnames' | 'annotated'>): string[] {
  return [
    ...new Set([...claim.hostnames, ...(claim.annotated ?? []).map((a) => a.name)].map(normalizeHostname)),
  ].sort();
}

/** Whether `a` keeps a name both claim: the older, and on the same second the lower "namespace/name". */
export function olderThan(a: HostnameClaim, b: HostnameClaim): boolean {
  return a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.gatewayDns < b.gatewayDns);
}

/**
 * A name is served when it is inside a zone the dns-servers serve (the suffix,
 * or one of the further zones the operator is told of), not under
 * clusters.<suffix> (the generated names of every team live there), and no
 * older GatewayDNS, in any namespace, asks for it: in its spec.hostnames,
 * through the fqdn annotation of its Service or by a route of its Gateway,
 * which all count the same. A refused name says which GatewayDNS holds it
 * (the oldest claim), and through what.
 */
export function customHostnames(
  self: HostnameClaim,
  suffix: string,
  others: HostnameClaim[],
  /** Further zones the dns-servers serve (the operator's --zone). */
  otherZones: readonly string[] = [],
  /** The DNSZones in force: their zones are served too, and their delegations decide who may use a name. */
  delegations: Delegations = { zones: [], labelsOf: () => undefined },
): HostnameResult {
  const zone = normalizeHostname(suffix);
  const flagZones = [zone, ...otherZones.map(normalizeHostname)];
  const zones = [...new Set([...flagZones, ...delegations.zones.map((z) => z.enforced.zone)])];
  const generated = `clusters.${zone}`;
  const served: string[] = [];
  const refused: HostnameResult['refused'] = [];
  const audited: NonNullable<HostnameResult['audited']> = [];
  const firstClaimZones = new Set<string>();
  const namespaceOf = (claim: HostnameClaim) => claim.gatewayDns.split('/')[0] ?? '';
  const verdict = (claim: HostnameClaim, name: string) =>
    verdictFor(name, namespaceOf(claim), delegations.labelsOf(namespaceOf(claim)), delegations.zones);
  for (const name of claimedNames(self)) {
    if (!zones.some((z) => name.endsWith(`.${z}`))) {
      refused.push({
        name,
        reason:
          zones.length > 1 ? `outside the zones served (${zones.join(', ')})` : `outside the zone ${zone}`,
        kind: 'Invalid',
      });
      continue;
    }
    if (name === generated || name.endsWith(`.${generated}`)) {
      refused.push({ name, reason: `under ${generated}, where names are generated`, kind: 'Invalid' });
      continue;
    }
    const mine = verdict(self, name);
    const enforced = mine.governed && mine.enforcement === 'Enforce';
    if (enforced && !mine.allowed) {
      // Where the name came from, when not from spec.hostnames (the annotation or route to change),
      // before to whom the zone delegates it: a message is cut at its end.
      const from = through(self, name);
      const missing = `zone ${mine.zone} delegates it to no namespace matching ${namespaceOf(self)}`;
      refused.push({
        name,
        reason: [
          missing,
          ...(from ? [`asked for${from}`] : []),
          ...(mine.delegatedTo ? [mine.delegatedTo] : []),
        ].join('; '),
        kind: 'NotDelegated',
      });
      continue;
    }
    // Under Enforce only the namespaces the delegation allows claim the name: the oldest of them keeps it.
    const holder = others
      .filter(
        (o) =>
          o.gatewayDns !== self.gatewayDns &&
          olderThan(o, self) &&
          claimedNames(o).includes(name) &&
          (!enforced || (verdict(o, name) as { allowed?: boolean }).allowed === true),
      )
      .reduce<HostnameClaim | undefined>(
        (oldest, o) => (oldest && olderThan(oldest, o) ? oldest : o),
        undefined,
      );
    if (holder) {
      refused.push({
        name,
        reason: `claimed by the older gatewaydns ${holder.gatewayDns}${through(holder, name)}`,
        kind: 'Conflict',
      });
      continue;
    }
    served.push(name);
    if (mine.governed && !mine.allowed) audited.push({ name, reason: mine.message ?? '' });
    if (!mine.governed) {
      const flagZone = governingZone(
        name,
        flagZones.map((z) => ({ name: z, enforced: { zone: z, enforcement: 'Audit', delegations: [] } })),
      );
      if (flagZone) firstClaimZones.add(flagZone.name);
    }
  }
  return {
    served,
    refused,
    ...(audited.length ? { audited } : {}),
    ...(firstClaimZones.size ? { firstClaimZones: [...firstClaimZones].sort() } : {}),
  };
}

/** How the holder claims the name, when only an annotation does: the Service a user would look for. */
function through(holder: HostnameClaim, name: string): string {
  if (holder.hostnames.map(normalizeHostname).includes(name)) return '';
  const annotation = holder.annotated?.find((a) => normalizeHostname(a.name) === name);
  if (!annotation) return '';
  // A route's claim names the route ("HTTPRoute shop/web in cluster a"), a Service's the annotation.
  return annotation.from.startsWith('Service ')
    ? ` through the fqdn annotation on ${annotation.from}`
    : ` through ${annotation.from}`;
}

/** The fqdn annotation's names: one, or several separated by commas or spaces. */
export function annotatedHostnames(value: string | undefined): string[] {
  return (value ?? '')
    .split(/[\s,]+/)
    .map(normalizeHostname)
    .filter(Boolean);
}
