// Pure: a zone with spec.nameservers.expose and what the workload clusters'
// exposed dns-servers look like now → the zone's NS set, its glue, what the
// status shows of each name server, and the records the parent zone needs
// (ADR 0215). A cluster whose exposed dns-server has no address now (Service
// gone, no load-balancer ingress yet, cluster unreachable) is no NS.
import { isIP } from 'node:net';
import {
  clusterSerial,
  type DeclaredZone,
  type Delegation,
  type EnforcedZone,
  type Glue,
  type ZoneCut,
  type ServedSerials,
  type ZoneNameserver,
} from '../../api/index.js';
import { delegates, inZone, normalizeName } from '../model/delegation.js';

/** One workload cluster as the zone controller sees its exposed dns-server. */
export interface ExposedServer {
  /** The Cluster's management namespace and name. */
  namespace: string;
  name: string;
  /** The load-balancer addresses of its exposed Service; empty when it has none or the cluster is unreachable. */
  addresses: string[];
  /** Its dns-server replicas' serial reports; the lowest serial of the zone is shown (clusterSerial). */
  serials?: readonly ServedSerials[];
}

export interface ZoneNameservers {
  /** The NS set to declare: the exposed servers' names, then the zone's own names (spec.nameservers.names). */
  nameServers: string[];
  glue: Glue[];
  /** status.nameservers. */
  servers: ZoneNameserver[];
  /** status.parentRecords: zone-file lines. */
  parentRecords: string[];
  /** The zone cuts of the namespace parts that have exposed servers (status.zoneCuts; the parent's cuts). */
  cuts: ZoneCut[];
  /** Parts that get no cut of their own, each with why (the NameserversExposed condition). */
  uncut: string[];
  /** The parts a cluster of this management namespace serves, as zones of their own. */
  partsServedBy: (namespace: string) => DeclaredZone[];
}

/** A namespace's part of the zone: the base of a delegation's patterns ("*.shop.z" and "shop.z": shop.z). */
interface Part {
  name: string;
  delegation: Delegation;
}

/** The NS name of a cluster's exposed dns-server in a zone: `<cluster>.<namespace>.ns.<zone>`. */
export function nameserverName(zone: string, namespace: string, cluster: string): string {
  return normalizeName(`${cluster}.${namespace}.ns.${zone}`);
}

/**
 * Which clusters serve the zone's names: under Enforce with delegations, the clusters of the
 * namespaces they delegate to (the record sets of a namespace go to its own clusters only);
 * otherwise every cluster told the zone.
 */
export function servesZone(
  enforced: EnforcedZone,
  namespace: string,
  namespaceLabels: (namespace: string) => Record<string, string> | undefined,
): boolean {
  if (enforced.enforcement !== 'Enforce' || !enforced.delegations.length) return true;
  return enforced.delegations.some((d) => delegates(d, namespace, namespaceLabels(namespace)));
}

export function zoneNameservers(
  enforced: EnforcedZone,
  exposed: readonly ExposedServer[],
  namespaceLabels: (namespace: string) => Record<string, string> | undefined,
): ZoneNameservers {
  const zone = enforced.zone;
  const servers: ZoneNameserver[] = exposed
    .filter((s) => s.addresses.length && servesZone(enforced, s.namespace, namespaceLabels))
    .map((s) => {
      const serial = clusterSerial(s.serials ?? [], normalizeName(zone));
      return {
        cluster: `${s.namespace}/${s.name}`,
        name: nameserverName(zone, s.namespace, s.name),
        addresses: [...new Set(s.addresses)].sort(),
        ...(serial === undefined ? {} : { serial }),
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
  const own = enforced.nameServers ?? [];
  const nameServers = [
    ...servers.map((s) => s.name),
    ...own.filter((n) => !servers.some((s) => s.name === n)),
  ];
  const glue = servers.map((s) => ({ name: s.name, addresses: s.addresses }));
  const parentRecords = [
    ...nameServers.map((n) => `${zone}. IN NS ${n}.`),
    ...glue.flatMap((g) => g.addresses.map((a) => `${g.name}. IN ${isIP(a) === 6 ? 'AAAA' : 'A'} ${a}`)),
  ];
  const { parts, uncut } = partsOf(enforced);
  const cut = parts
    .map((part) => ({
      part,
      nameServers: exposed
        .filter(
          (s) => s.addresses.length && delegates(part.delegation, s.namespace, namespaceLabels(s.namespace)),
        )
        .map((s) => nameserverName(zone, s.namespace, s.name))
        .sort(),
    }))
    .filter((c) => {
      if (!c.nameServers.length) uncut.push(`${c.part.name} (no exposed dns-server of its namespaces)`);
      return c.nameServers.length > 0;
    });
  return {
    nameServers,
    glue,
    servers,
    parentRecords,
    cuts: cut.map((c) => ({ name: c.part.name, nameServers: c.nameServers })),
    uncut,
    partsServedBy: (namespace) =>
      cut
        .filter((c) => delegates(c.part.delegation, namespace, namespaceLabels(namespace)))
        .map((c) => ({
          name: c.part.name,
          ...(enforced.soa ? { soa: enforced.soa } : {}),
          nameServers: c.nameServers,
        })),
  };
}

/**
 * The namespace parts of a zone under Enforce (ADR 0215): one per base of the delegations'
 * patterns. The apex cannot be cut (a part there is served by the apex's servers); a part holding
 * the NS names (`ns.<zone>`), one inside another part, or the same base given to two delegations
 * gets no cut of its own.
 */
function partsOf(enforced: EnforcedZone): { parts: Part[]; uncut: string[] } {
  if (enforced.enforcement !== 'Enforce') return { parts: [], uncut: [] };
  const zone = enforced.zone;
  const nsNames = `ns.${zone}`;
  const byName = new Map<string, Part>();
  const uncut: string[] = [];
  for (const delegation of enforced.delegations)
    for (const pattern of delegation.hostnames) {
      const name = pattern.startsWith('*.') ? pattern.slice(2) : pattern;
      if (name === zone) continue;
      if (inZone(name, nsNames) || inZone(nsNames, name)) {
        uncut.push(`${name} (holds the name servers' names, ${nsNames})`);
        continue;
      }
      const known = byName.get(name);
      if (known && known.delegation !== delegation) uncut.push(`${name} (delegated twice)`);
      else byName.set(name, { name, delegation });
    }
  const parts = [...byName.values()].filter((p) => {
    const outer = [...byName.keys()].find((o) => o !== p.name && inZone(p.name, o));
    if (outer) uncut.push(`${p.name} (inside the part ${outer})`);
    return !outer;
  });
  return { parts: parts.sort((a, b) => a.name.localeCompare(b.name)), uncut: [...new Set(uncut)] };
}
