// The pure heart of the operator: a GatewayDNS and what its selected clusters
// currently say (ClusterFacts) become the DNSRecordSets, one per source
// cluster, that every workload cluster of the namespace receives. No I/O here.
import { isIP } from 'node:net';
import {
  API_VERSION,
  DNSRECORDSET_KIND,
  clusterGatewayDomain,
  namespaceGatewayDomain,
  recordSetLabels,
  recordSetName,
  srvName,
  wildcard,
  type DNSRecord,
  type DNSRecordSet,
} from '../../../api/index.js';
import type { ClusterFacts, GatewayPort } from '../../model/facts.js';
import { RESOLUTION_TYPES } from '../../model/resolution-types.js';
import type { EffectiveSpec } from '../../model/validate.js';
import { candidatePolicy } from './traffic-policy.js';

export interface DesiredInput {
  namespace: string;
  name: string;
  spec: EffectiveSpec;
  /** --domain-suffix */
  suffix: string;
  /** One entry per selected cluster; Unreachable ones carry their last known addresses. */
  facts: ClusterFacts[];
  /** Domains that an older GatewayDNS claims: nothing at or under them is produced. */
  excludedDomains?: string[];
  /** answer localFirst: the workload cluster that receives this record set. */
  receivingCluster?: string;
  /** Custom host names to serve (already checked: see hostnames.ts); they answer like the cluster-independent name. */
  hostnames?: string[];
  /** Each selected Cluster's labels: its failover tier and weight (traffic-policy.ts). */
  clusterLabels?: ReadonlyMap<string, Record<string, string> | undefined>;
}

/** Shards (see shardsFor) as the DNSRecordSet objects that carry them. */
export function recordSetsOf(
  owner: { namespace: string; name: string },
  shards: Map<string, DNSRecord[]>,
  recordsNamespace: string,
): DNSRecordSet[] {
  return [...shards].map(([cluster, records]) => ({
    apiVersion: API_VERSION,
    kind: DNSRECORDSET_KIND,
    metadata: {
      name: recordSetName(owner.namespace, owner.name, cluster),
      namespace: recordsNamespace,
      labels: recordSetLabels(owner.namespace, owner.name, cluster),
    },
    spec: { records },
  }));
}

/** Every record the GatewayDNS answers with, as a dns-server serves them once it has merged all shards. */
export function recordsFor(input: DesiredInput): DNSRecord[] {
  return mergeRecords([...shardsFor(input).values()]);
}

/**
 * Per source cluster (sorted), the records it contributes: its own names, and
 * its share of the names every cluster answers (the cluster-independent name,
 * custom host names, their SRV records). Only clusters with records appear.
 * The union of the shards, merged by name and type, is the whole answer; a
 * change in one cluster changes only its shard, except where the answer as a
 * whole changes shape (a CNAME giving way to addresses, localFirst falling
 * back to the union).
 */
export function shardsFor(input: DesiredInput): Map<string, DNSRecord[]> {
  return shardViews(input).shards(input.receivingCluster);
}

/**
 * shardsFor, for every receiving cluster of one reconcile. With answer
 * localFirst each receiving cluster that answers locally sees other shards;
 * the per-cluster names, most of a large Service's records, are the same in
 * all of them and are computed once, and receiving clusters that see the same
 * view share its result.
 */
export interface ShardViews {
  /** The view a receiving cluster gets: the cluster itself where it answers locally, "" for the union. */
  viewOf(receivingCluster?: string): string;
  shards(receivingCluster?: string): Map<string, DNSRecord[]>;
}

export function shardViews(input: Omit<DesiredInput, 'receivingCluster'>): ShardViews {
  const { spec, namespace, suffix } = input;
  const ttl = spec.ttl;
  const withAddresses = [...input.facts]
    .filter((f) => f.addresses.length > 0)
    .sort((a, b) => byCodePoint(a.cluster, b.cluster));
  const { nodePorts, headless } = RESOLUTION_TYPES[spec.resolutionType];
  // SRV records carry ports: a nodePort Service's node ports, a Gateway's listener ports.
  const srvPorts = nodePorts || spec.gateway !== undefined;
  const shared = namespaceGatewayDomain(spec.gatewayLabel, namespace, suffix);
  const excluded = (input.excludedDomains ?? []).map((d) => d.toLowerCase());
  const kept = (records: DNSRecord[]) =>
    records.filter((r) => !excluded.some((d) => isAtOrUnder(r.name.toLowerCase(), d)));

  // Each cluster's own names, the same in every view.
  const own = withAddresses.map((facts) => {
    const records: DNSRecord[] = [];
    const domain = clusterGatewayDomain(spec.gatewayLabel, facts.cluster, namespace, suffix);
    records.push(...addressRecords(wildcard(domain), facts.addresses, ttl));
    /** headless: SRV values per "_<port>._<proto>" label pair, for the cluster-independent name. */
    const headlessSrv = new Map<string, string[]>();
    // A loop, not push(...): a 10,000-pod Service has more records than call arguments may be.
    if (headless) for (const r of headlessRecords(domain, facts, ttl, headlessSrv)) records.push(r);
    if (srvPorts && hasIp(facts.addresses)) {
      // The SRV target must own address records itself (RFC 2782: not an alias),
      // and a wildcard does not cover its own parent, so the domain gets them too.
      records.push(...addressRecords(domain, facts.addresses, ttl));
      for (const port of facts.ports)
        records.push(srv(srvName(port.name, port.protocol, domain), [srvValue(port, domain)], ttl));
    }
    return { facts, domain, headlessSrv, records: kept(records).sort(byRecord) };
  });

  const { everywhere, byRoute } = hostnamesByHolder(input.hostnames ?? [], spec.hostnames, input.facts);
  const policied = spec.trafficPolicy !== undefined;
  const viewOf = (receivingCluster?: string) =>
    spec.answer === 'localFirst'
      ? (withAddresses.find((f) => f.cluster === receivingCluster)?.cluster ?? '')
      : '';
  const views = new Map<string, Map<string, DNSRecord[]>>();
  const view = (local: string): Map<string, DNSRecord[]> => {
    // localFirst: a selected cluster with ready addresses answers the cluster-independent name with
    // its own; every other cluster (and this one, once it has none) gets the union. With a traffic
    // policy every cluster is a candidate, and the dns-server chooses (the own one's tier first).
    const answering = new Set(
      local && !policied ? withAddresses.filter((f) => f.cluster === local) : withAddresses,
    );
    // A CNAME has one target and no other data beside it (RFC 1034 section 3.6.2): the shared
    // names alias the smallest host name, and only when no answering cluster has an address.
    const anyIp = [...answering].some((f) => hasIp(f.addresses));
    const cnameTarget = anyIp
      ? undefined
      : [...answering].flatMap((f) => f.addresses.filter((a) => isIP(a) === 0)).sort(byCodePoint)[0];
    // A route's host name is answered by the clusters whose Gateway accepted the route: those among
    // the answering ones, or, where none of them has it (localFirst elsewhere), all that have it.
    const routeAnswering = new Map<string, Set<ClusterFacts>>();
    for (const [name, holders] of byRoute) {
      const near = holders.filter((f) => answering.has(f));
      routeAnswering.set(name, new Set(near.length ? near : holders));
    }
    const shards = new Map<string, DNSRecord[]>();
    for (const { facts, domain, headlessSrv, records } of own) {
      let shard = records;
      const names = answering.has(facts) ? [wildcard(shared), ...everywhere] : [];
      for (const [name, chosen] of routeAnswering) if (chosen.has(facts)) names.push(name);
      if (names.length) {
        const sharedRecords: DNSRecord[] = [];
        const addresses = anyIp
          ? facts.addresses.filter((a) => isIP(a) !== 0)
          : cnameTarget !== undefined && facts.addresses.includes(cnameTarget)
            ? [cnameTarget]
            : [];
        const policy = candidatePolicy(spec, {
          namespace,
          cluster: facts.cluster,
          labels: input.clusterLabels?.get(facts.cluster),
          probePort: facts.probePort,
          local: facts.cluster === local,
        });
        for (const name of names)
          for (const record of addressRecords(name, addresses, ttl))
            // A CNAME has one target: it cannot be one candidate among others.
            sharedRecords.push(policy && record.type !== 'CNAME' ? { ...record, policy } : record);
        if (answering.has(facts) && srvPorts && hasIp(facts.addresses))
          for (const port of facts.ports)
            sharedRecords.push(srv(srvName(port.name, port.protocol, shared), [srvValue(port, domain)], ttl));
        if (answering.has(facts))
          for (const [labels, values] of headlessSrv)
            sharedRecords.push(srv(`${labels}.${shared}`, values, ttl));
        // Appended to a sorted list: the sort is a merge of two runs.
        shard = [...records, ...kept(sharedRecords)].sort(byRecord);
      }
      if (shard.length) shards.set(facts.cluster, shard);
    }
    return shards;
  };
  return {
    viewOf,
    shards(receivingCluster) {
      const local = viewOf(receivingCluster);
      let shards = views.get(local);
      if (!shards) views.set(local, (shards = view(local)));
      return shards;
    },
  };
}

/**
 * The served custom host names split by who answers them: names of spec.hostnames and of the fqdn
 * annotation, answered like the cluster-independent name, and names only routes ask for (spec.gatewayRef),
 * each with the clusters with addresses whose Gateway accepted such a route (none: not answered).
 */
function hostnamesByHolder(
  served: readonly string[],
  specHostnames: readonly string[],
  facts: readonly ClusterFacts[],
): { everywhere: string[]; byRoute: Map<string, ClusterFacts[]> } {
  const shared = new Set([
    ...specHostnames.map((n) => n.toLowerCase()),
    ...facts.flatMap((f) => f.annotatedHostnames ?? []),
  ]);
  // Clusters without addresses hold a route's name too: it is theirs, answered by none of the others.
  const routed = new Map<string, ClusterFacts[]>();
  for (const f of facts)
    for (const { name } of f.routeHostnames ?? []) appendTo(routed, name, f.addresses.length ? [f] : []);
  const everywhere: string[] = [];
  const byRoute = new Map<string, ClusterFacts[]>();
  for (const name of served) {
    const holders = routed.get(name);
    if (holders && !shared.has(name)) byRoute.set(name, holders);
    else everywhere.push(name);
  }
  return { everywhere, byRoute };
}

/** Records of the same name and type become one with the union of their values, as a dns-server merges them. */
export function mergeRecords(lists: readonly DNSRecord[][]): DNSRecord[] {
  const merged = new Map<string, DNSRecord>();
  for (const records of lists)
    for (const r of records) {
      const key = `${r.name}/${r.type}`;
      const seen = merged.get(key);
      if (!seen) merged.set(key, { ...r, values: [...r.values] });
      else for (const v of r.values) seen.values.push(v);
    }
  return [...merged.values()].map((r) => ({ ...r, values: unique(r.values) })).sort(byRecord);
}

function byRecord(a: DNSRecord, b: DNSRecord): number {
  return byCodePoint(a.name, b.name) || byCodePoint(a.type, b.type);
}

/**
 * headless, one cluster: the domain itself answers every ready pod (it is the
 * SRV target of pods without a host name, and a wildcard does not cover its
 * parent); a pod with a host name answers alone at <hostname>.<domain>, as
 * web-0.web.<ns>.svc does inside its cluster (an existing name wins over the
 * wildcard, RFC 4592 section 2.2); named ports get SRV records (RFC 2782)
 * pointing at those per-pod names, or at the domain for pods without one.
 */
function headlessRecords(
  domain: string,
  facts: ClusterFacts,
  ttl: number,
  gathered: Map<string, string[]>,
): DNSRecord[] {
  const out = addressRecords(domain, facts.addresses, ttl);
  const byHost = new Map<string, string[]>();
  const srvValues = new Map<string, string[]>();
  for (const ep of facts.endpoints ?? []) {
    const target = ep.hostname ? `${ep.hostname}.${domain}` : domain;
    if (ep.hostname) appendTo(byHost, ep.hostname, ep.addresses);
    for (const port of ep.ports) {
      const labels = `_${port.name}._${port.protocol.toLowerCase()}`;
      appendTo(srvValues, labels, [`0 0 ${port.port} ${target}.`]);
    }
  }
  for (const [hostname, addresses] of byHost)
    out.push(...addressRecords(`${hostname}.${domain}`, addresses, ttl));
  // A pod that exists but is not ready must not be answered by the wildcard with
  // its siblings' addresses (a client of pg-2 would reach pg-0): its name gets
  // only a TXT record, so A and AAAA are NODATA there (RFC 4592 section 2.2.2).
  for (const hostname of facts.unreadyHostnames ?? [])
    if (!byHost.has(hostname))
      out.push({ name: `${hostname}.${domain}`, type: 'TXT', ttl, values: ['endpoint not ready'] });
  for (const [labels, values] of srvValues) {
    out.push(srv(`${labels}.${domain}`, values, ttl));
    appendTo(gathered, labels, values);
  }
  return out;
}

/** Appends in place: copying the list on every pod would make a large Service quadratic. */
function appendTo<T>(map: Map<string, T[]>, key: string, values: readonly T[]): void {
  const list = map.get(key);
  if (!list) map.set(key, [...values]);
  else for (const v of values) list.push(v);
}

/**
 * A/AAAA for addresses; a CNAME when there are only host names (as cloud load
 * balancers give). A CNAME cannot share its name with other data (RFC 1034
 * section 3.6.2) and has one target, so host names are dropped when IPs exist
 * and only the first host name is used.
 */
function addressRecords(name: string, addresses: string[], ttl: number): DNSRecord[] {
  const v4 = unique(addresses.filter((a) => isIP(a) === 4));
  const v6 = unique(addresses.filter((a) => isIP(a) === 6));
  const hosts = unique(addresses.filter((a) => isIP(a) === 0)).sort();
  const out: DNSRecord[] = [];
  if (v4.length) out.push({ name, type: 'A', ttl, values: v4 });
  if (v6.length) out.push({ name, type: 'AAAA', ttl, values: v6 });
  if (!out.length && hosts.length) out.push({ name, type: 'CNAME', ttl, values: [hosts[0]!] });
  return out;
}

function srv(name: string, values: string[], ttl: number): DNSRecord {
  return { name, type: 'SRV', ttl, values: unique(values) };
}

/** RFC 2782 "priority weight port target"; equal priority and weight: clients pick at random. */
function srvValue(port: GatewayPort, target: string): string {
  return `0 0 ${port.port} ${target}.`;
}

function hasIp(addresses: string[]): boolean {
  return addresses.some((a) => isIP(a) !== 0);
}

function unique(values: string[]): string[] {
  return [...new Set(values)].sort();
}

/** Locale-independent order: the same records always serialise the same. */
function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function isAtOrUnder(name: string, domain: string): boolean {
  return name === domain || name.endsWith(`.${domain}`);
}
