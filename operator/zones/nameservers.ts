// Pure: a zone with spec.nameservers.expose and what the workload clusters'
// exposed dns-servers look like now → the zone's NS set, its glue, what the
// status shows of each name server, and the records the parent zone needs
// (ADR 0215). A cluster whose exposed dns-server has no address now (Service
// gone, no load-balancer ingress yet, cluster unreachable) is no NS.
import { isIP } from 'node:net';
import type { EnforcedZone, Glue, ZoneNameserver } from '../../api/index.js';
import { delegates, normalizeName } from '../model/delegation.js';

/** One workload cluster as the zone controller sees its exposed dns-server. */
export interface ExposedServer {
  /** The Cluster's management namespace and name. */
  namespace: string;
  name: string;
  /** The load-balancer addresses of its exposed Service; empty when it has none or the cluster is unreachable. */
  addresses: string[];
}

export interface ZoneNameservers {
  /** The NS set to declare: the exposed servers' names, then the zone's own names (spec.nameservers.names). */
  nameServers: string[];
  glue: Glue[];
  /** status.nameservers. */
  servers: ZoneNameserver[];
  /** status.parentRecords: zone-file lines. */
  parentRecords: string[];
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
    .map((s) => ({
      cluster: `${s.namespace}/${s.name}`,
      name: nameserverName(zone, s.namespace, s.name),
      addresses: [...new Set(s.addresses)].sort(),
    }))
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
  return { nameServers, glue, servers, parentRecords };
}
