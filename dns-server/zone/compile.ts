// Record sets (DNSRecordSet objects from any source) → zones. Records that
// name the same owner and type are merged with their values deduplicated;
// a record that cannot be served is reported and skipped, never fatal.
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import {
  DEFAULT_TTL,
  MAX_ANSWER_OCTETS,
  nameWireOctets,
  type DNSRecordSet,
  type RecordPolicy,
} from '../../api/index.js';
import { isInZone, isWildcard as isWildcardName, NameError, parseName } from './name.js';
import { namesBetween, presentData, T, type RData, type RRset } from './rr.js';
import { consume } from './consume.js';
import { parseValue, RecordError } from './values.js';
import { parsePolicy } from './policy-record.js';
import {
  candidateOf,
  choose,
  probeTargetsOf,
  union,
  type Candidate,
  type ProbeTarget,
  type Unhealthy,
} from './policy.js';
import { Zone, type ZoneNode } from './zone.js';

/** What the flags say about a zone: its apex and the data of its synthesised SOA and NS (RFC 1035 section 3.3.13). */
export interface ZoneConfig {
  name: string;
  /** Primary name server (SOA MNAME); also the NS target unless `nameServers` says otherwise. */
  mname: string;
  /** Mailbox of the person responsible, in domain-name form (SOA RNAME). */
  rname: string;
  nameServers: string[];
  /** Addresses of in-zone name servers (a DNSZone's exposed dns-servers, ADR 0215): A and AAAA records at their names. */
  glue?: { name: string; addresses: string[] }[];
  /** Zone cuts (ADR 0215): names below which other name servers answer; each answered as a referral. */
  cuts?: { name: string; nameServers: string[] }[];
  /** TTL of the SOA and NS records. */
  ttl: number;
  refresh: number;
  retry: number;
  expire: number;
  /** Negative-caching TTL (RFC 2308 section 4). */
  minimum: number;
  /** Zone transfer to these secondaries, signed with this TSIG key (ADR 0216); none when unset. */
  transfer?: ZoneTransferConfig;
}

export interface ZoneTransferConfig {
  /** NOTIFY targets, and the only clients allowed to transfer. */
  secondaries: { address: string; port: number }[];
  /** The name of the TSIG key (RFC 8945) every transfer and NOTIFY of the zone is signed with. */
  keyName: string;
}

/** A record set and where it came from ("file:/path" or "k8s:namespace/name"), for problem reports. */
export interface SourcedRecordSet {
  source: string;
  set: DNSRecordSet;
  /**
   * Changes whenever the set does (a records file's document text); without it, the set's uid and
   * resourceVersion, when it has both, are its version.
   */
  version?: string;
}

export interface Problem {
  source: string;
  record?: string;
  reason: string;
}

export interface CompiledZones {
  zones: Zone[];
  problems: Problem[];
  /** Records served, SOA and NS included. */
  records: number;
  /** Changes exactly when the served data changes; the store bumps the SOA serial on a change. */
  fingerprint: string;
  /** What the traffic policies of the records ask this dns-server to probe. */
  probeTargets: ProbeTarget[];
  /** Per policy name and type ("name/A"), the tier that answers (undefined: none healthy). */
  answeringTiers: Map<string, number | undefined>;
}

const TTL_MAX = 2 ** 31 - 1; // RFC 2181 section 8

/**
 * @param cache parsed record sets kept from earlier builds: a set whose version
 *   did not change is not validated and parsed again (when one set of a hundred changes, one is)
 */
export function compileZones(
  input: Iterable<SourcedRecordSet>,
  configs: ZoneConfig[],
  serial: number,
  cache: ParseCache = new ParseCache(),
  unhealthy: Unhealthy = new Set(),
): CompiledZones {
  const problems: Problem[] = [];
  // Longest zone first, so a record lands in the most specific zone that holds it.
  const byLength = [...configs].sort((a, b) => b.name.length - a.name.length);
  const sets = new Map<string, Map<string, MergedSet>>(configs.map((c) => [c.name, new Map()]));

  cache.begin(configs);
  for (const sourced of input) {
    const parsed = cache.parsed(sourced, byLength);
    for (const p of parsed.problems) problems.push(p);
    for (const record of parsed.records) mergeRecord(record, sets.get(record.zone)!);
  }
  cache.end();

  const zones: Zone[] = [];
  let count = 0;
  const hash = createHash('sha256');
  const probeTargets = new Map<string, ProbeTarget>();
  const answeringTiers = new Map<string, number | undefined>();
  for (const config of configs) {
    const merged = sets.get(config.name)!;
    choosePolicies(merged, unhealthy, probeTargets, answeringTiers);
    resolveCnameConflicts(merged, problems);
    dropOversized(merged, problems);
    hash.update(JSON.stringify(config));
    const { zone, records } = makeZone(config, merged, serial, hash);
    zones.push(zone);
    count += records;
  }
  return {
    zones,
    problems,
    records: count,
    fingerprint: hash.digest('hex'),
    probeTargets: [...probeTargets.values()],
    answeringTiers,
  };
}

/** One record of a set, validated and parsed: what the merge needs. Never changed once made. */
interface ParsedRecord {
  zone: string;
  name: string;
  type: number;
  ttl: number;
  /** Presentation form of each value (see MergedSet.keys), index for index with `data`. */
  keys: string[];
  data: RData[];
  /** Traffic policy: these values are one candidate of the name's answer. */
  policy?: RecordPolicy;
}

interface ParsedSet {
  /** SourcedRecordSet.version, or uid and resourceVersion; undefined for sets that have neither (tests): never reused. */
  version: string | undefined;
  records: ParsedRecord[];
  problems: Problem[];
}

/**
 * Parsed record sets by source, kept between builds (in the build worker, which lives while
 * builds keep coming). Validation and parsing are about half of a build's time; a Kubernetes
 * object with the same uid and resourceVersion has the same content, as has a records file's
 * document with the same text, so only changed sets are parsed again. Sources not seen in a build are forgotten after it.
 */
export class ParseCache {
  private readonly bySource = new Map<string, ParsedSet>();
  private seen = new Set<string>();
  private zonesKey = '';
  /** Records held in `bySource`. */
  private held = 0;

  /**
   * @param maxRecords most records kept between builds. A build thread whose live heap is past
   *   ../build/builder.ts MAX_WARM_HEAP_BYTES is ended after the build anyway, so keeping the sets of
   *   a larger zone would only raise the build's peak: past this, sets are parsed, merged and let go.
   *   20,000 records kept leave about 25 MB live.
   */
  constructor(private readonly maxRecords = 25_000) {}

  begin(configs: ZoneConfig[]): void {
    // Which zone a record lands in depends on the zones served.
    const key = JSON.stringify(configs.map((c) => c.name));
    if (key !== this.zonesKey) this.clear();
    this.zonesKey = key;
    this.seen = new Set();
  }

  parsed({ source, set, version: given }: SourcedRecordSet, zones: ZoneConfig[]): ParsedSet {
    this.seen.add(source);
    const meta = (set as Partial<DNSRecordSet>)?.metadata;
    const version =
      given ?? (meta?.uid && meta.resourceVersion ? `${meta.uid}/${meta.resourceVersion}` : undefined);
    const known = this.bySource.get(source);
    if (version !== undefined && known?.version === version) return known;
    const parsed = parseSet(source, set, zones, version);
    this.forget(source);
    if (version !== undefined && this.held + parsed.records.length <= this.maxRecords) {
      this.bySource.set(source, parsed);
      this.held += parsed.records.length;
    }
    return parsed;
  }

  end(): void {
    for (const source of this.bySource.keys()) if (!this.seen.has(source)) this.forget(source);
  }

  private forget(source: string): void {
    this.held -= this.bySource.get(source)?.records.length ?? 0;
    this.bySource.delete(source);
  }

  private clear(): void {
    this.bySource.clear();
    this.held = 0;
  }

  get size(): number {
    return this.bySource.size;
  }
}

function parseSet(
  source: string,
  set: DNSRecordSet,
  zones: ZoneConfig[],
  version: string | undefined,
): ParsedSet {
  const out: ParsedSet = { version, records: [], problems: [] };
  const records = (set as Partial<DNSRecordSet>)?.spec?.records;
  if (!Array.isArray(records)) {
    out.problems.push({ source, reason: 'spec.records is not a list' });
    return out;
  }
  for (const record of records) {
    try {
      out.records.push(parseRecord(record, zones));
    } catch (err) {
      if (!(err instanceof RecordError || err instanceof NameError)) throw err;
      out.problems.push({ source, record: `${record?.name}/${record?.type}`, reason: err.message });
    }
  }
  return out;
}

interface MergedSet {
  name: string;
  type: number;
  ttl: number;
  /**
   * Presentation forms, which deduplicate equal values written differently ("::1" vs "0::1"), and
   * the data, index for index. Arrays, not a Map: sets are small and there may be 100,000 of them.
   */
  keys: string[];
  data: RData[];
  /** `keys` as a Set, made once a set has INDEX_FROM values. */
  index?: Set<string>;
  /** Traffic policy: the candidates, chosen among into keys and data (or variants) before the zone is made. */
  candidates?: Candidate[];
  /** More than one: answers drawn by weight (set by choosePolicies). */
  variants?: { keys: string[]; data: RData[]; weight: number }[];
}

const INDEX_FROM = 16;

function parseRecord(record: unknown, zones: ZoneConfig[]): ParsedRecord {
  if (typeof record !== 'object' || record === null) throw new RecordError('record is not an object');
  const { name: rawName, type, ttl: rawTtl, values, policy: rawPolicy } = record as Record<string, unknown>;
  if (typeof rawName !== 'string') throw new RecordError('name is not a string');
  if (typeof type !== 'string') throw new RecordError('type is not a string');
  const name = parseName(rawName, { wildcard: true });
  const zone = zones.find((z) => isInZone(name, z.name));
  if (!zone)
    throw new RecordError(
      `"${rawName}" is in none of the zones served (${zones.map((z) => z.name).join(', ')})`,
    );
  const ttl = rawTtl === undefined || rawTtl === null ? DEFAULT_TTL : rawTtl;
  if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 0 || ttl > TTL_MAX)
    throw new RecordError(`ttl ${JSON.stringify(rawTtl)} is not an integer from 0 to ${TTL_MAX}`);
  if (!Array.isArray(values) || values.length === 0) throw new RecordError('values is not a non-empty list');
  const parsed = values.map((v) => parseValue(type, v as string));
  if (type === 'CNAME' && parsed.length !== 1) throw new RecordError('a CNAME record has exactly one value');
  const typeCode = parsed[0]!.type;
  const policy = rawPolicy === undefined || rawPolicy === null ? undefined : parsePolicy(rawPolicy, type);
  return {
    zone: zone.name,
    name,
    type: typeCode,
    ttl,
    keys: parsed.map((p) => presentData(typeCode, p.data)),
    data: parsed.map((p) => p.data),
    ...(policy ? { policy } : {}),
  };
}

function mergeRecord(record: ParsedRecord, zoneSets: Map<string, MergedSet>): void {
  const key = `${record.name}/${record.type}`;
  let merged = zoneSets.get(key);
  if (record.policy || merged?.candidates) return mergeCandidate(record, key, merged, zoneSets);
  if (!merged) {
    // Most names have one record of one value. An array literal holds exactly that value, where
    // an array grown from empty by push reserves 17 slots (100,000 records: about 25 MB of heap).
    const single = record.keys.length === 1;
    merged = {
      name: record.name,
      type: record.type,
      ttl: record.ttl,
      keys: single ? [record.keys[0]!] : [],
      data: single ? [record.data[0]!] : [],
    };
    zoneSets.set(key, merged);
    if (single) return;
  }
  // RFC 2181 section 5.2: an RRset has one TTL; the smallest wins when sets disagree.
  merged.ttl = Math.min(merged.ttl, record.ttl);
  for (let i = 0; i < record.keys.length; i++) {
    const value = record.keys[i]!;
    if (merged.keys.length < INDEX_FROM) {
      if (merged.keys.includes(value)) continue;
    } else {
      // Shards of one large Service merge into sets of thousands of values: a scan per value would be quadratic.
      merged.index ??= new Set(merged.keys);
      if (merged.index.has(value)) continue;
      merged.index.add(value);
    }
    merged.keys.push(value);
    merged.data.push(record.data[i]!);
  }
}

/**
 * A record with a traffic policy is a candidate, kept apart from the others until choosePolicies.
 * A record without one at the same name and type (another writer's) is a candidate of tier 0.
 */
function mergeCandidate(
  record: ParsedRecord,
  key: string,
  merged: MergedSet | undefined,
  zoneSets: Map<string, MergedSet>,
): void {
  const plain = (keys: string[], data: RData[]): Candidate => ({ cluster: '', tier: 0, keys, data });
  if (!merged) {
    merged = { name: record.name, type: record.type, ttl: record.ttl, keys: [], data: [], candidates: [] };
    zoneSets.set(key, merged);
  } else if (!merged.candidates) {
    merged.candidates = [plain(merged.keys, merged.data)];
    merged.keys = [];
    merged.data = [];
    delete merged.index;
  }
  merged.ttl = Math.min(merged.ttl, record.ttl);
  merged.candidates!.push(
    record.policy ? candidateOf(record.policy, record.keys, record.data) : plain(record.keys, record.data),
  );
}

/** Each policy set's candidates → the values this dns-server answers with (policy.ts), and what to probe. */
function choosePolicies(
  merged: Map<string, MergedSet>,
  unhealthy: Unhealthy,
  probeTargets: Map<string, ProbeTarget>,
  answeringTiers: Map<string, number | undefined>,
): void {
  for (const set of merged.values()) {
    const candidates = set.candidates;
    if (!candidates) continue;
    probeTargetsOf(candidates, probeTargets);
    const choice = choose(candidates, unhealthy);
    answeringTiers.set(`${set.name}/${typeName(set.type)}`, choice.tier);
    delete set.candidates;
    // answerNone with none healthy: the name keeps existing with no such record (NODATA, RFC 2308
    // section 2.2), so that a resolver does not cache it as gone (NXDOMAIN) for every type.
    if (!choice.variants.length) continue;
    // The RRset's data is every variant's values (what ANY and the size checks see).
    const all = union(choice.variants, 1);
    set.keys = all.keys;
    set.data = all.data;
    if (choice.variants.length > 1) set.variants = choice.variants;
  }
}

/**
 * RFC 1034 section 3.6.2 / RFC 2181 section 10.1: a CNAME owner has no other data, and one CNAME.
 * The other data wins (it is more likely deliberate); among CNAMEs the smallest target wins, so
 * the choice does not depend on the order the sources delivered them.
 */
function resolveCnameConflicts(merged: Map<string, MergedSet>, problems: Problem[]): void {
  const typesByName = new Map<string, number[]>();
  for (const set of merged.values())
    typesByName.set(set.name, [...(typesByName.get(set.name) ?? []), set.type]);
  for (const [name, types] of typesByName) {
    const cname = merged.get(`${name}/${T.CNAME}`);
    if (!cname) continue;
    if (types.length > 1) {
      merged.delete(`${name}/${T.CNAME}`);
      problems.push({
        source: 'merge',
        record: `${name}/CNAME`,
        reason: 'a CNAME cannot share its name with other records; CNAME skipped',
      });
    } else if (cname.keys.length > 1) {
      const keep = [...cname.keys].sort()[0]!;
      problems.push({
        source: 'merge',
        record: `${name}/CNAME`,
        reason: `record sets give ${cname.keys.length} CNAME targets; serving ${keep}`,
      });
      cname.data = [cname.data[cname.keys.indexOf(keep)]!];
      cname.keys = [keep];
    }
  }
}

/**
 * An RRset whose answer cannot fit a DNS message even over TCP (65,535 octets,
 * RFC 1035 section 4.2.2) cannot be served whole, and RFC 2181 section 5 does
 * not allow serving part of it: it is skipped and reported.
 */
function dropOversized(merged: Map<string, MergedSet>, problems: Problem[]): void {
  for (const [key, set] of merged) {
    let octets = 0;
    for (const d of set.data) octets += rdataAnswerOctets(d);
    if (octets <= MAX_ANSWER_OCTETS) continue;
    merged.delete(key);
    problems.push({
      source: 'merge',
      record: `${set.name}/${typeName(set.type)}`,
      reason: `${set.data.length} values need ${octets} octets in an answer, more than a DNS message over TCP holds (${MAX_ANSWER_OCTETS}); record skipped`,
    });
  }
}

/** As the encoder writes one record: owner pointer (2), type, class, TTL, length (10), RDATA. */
function rdataAnswerOctets(d: RData): number {
  switch (d.kind) {
    case 'bytes':
      return 12 + d.bytes.length;
    case 'name':
      return 12 + nameWireOctets(d.target);
    case 'srv':
      return 12 + 6 + nameWireOctets(d.target);
    case 'soa':
      return 12 + nameWireOctets(d.mname) + nameWireOctets(d.rname) + 20;
  }
}

function typeName(type: number): string {
  return Object.entries(T).find(([, code]) => code === type)?.[0] ?? String(type);
}

function makeZone(
  config: ZoneConfig,
  merged: Map<string, MergedSet>,
  serial: number,
  hash: ReturnType<typeof createHash>,
): { zone: Zone; records: number } {
  const nodes = new Map<string, ZoneNode>();
  const nodeAt = (name: string): ZoneNode => {
    let node = nodes.get(name);
    if (!node) {
      node = { name, rrsets: new Map(), wildcard: isWildcardName(name) };
      nodes.set(name, node);
    }
    return node;
  };
  const apex = nodeAt(config.name);
  const soa: RRset = {
    name: config.name,
    type: T.SOA,
    ttl: config.ttl,
    data: [
      {
        kind: 'soa',
        mname: config.mname,
        rname: config.rname,
        serial,
        refresh: config.refresh,
        retry: config.retry,
        expire: config.expire,
        minimum: config.minimum,
      },
    ],
  };
  apex.rrsets.set(T.SOA, soa);
  apex.rrsets.set(T.NS, {
    name: config.name,
    type: T.NS,
    ttl: config.ttl,
    data: config.nameServers.map((target) => ({ kind: 'name', target })),
  });
  let records = 1 + config.nameServers.length;
  // Sorted by name and type so that ANY answers and the wire layout are stable.
  const ordered: (MergedSet | undefined)[] = [...merged.values()].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : a.type - b.type,
  );
  // From here the sorted list alone holds the merged sets, and each is let go once it is in the zone.
  merged.clear();
  for (const set of consume(ordered)) {
    if (!set.data.length) {
      // A policy name answering nothing now: the name exists, without this type (NODATA).
      nodeAt(set.name);
      for (const between of namesBetween(set.name, config.name)) nodeAt(between);
      hash.update(`${set.name} ${set.type} none\n`);
      continue;
    }
    // The fingerprint follows the sorted sets, so the order the sources delivered them is irrelevant.
    hash.update(`${set.name} ${set.type} ${set.ttl} ${[...set.keys].sort().join(' ')}\n`);
    for (const v of set.variants ?? []) hash.update(`  ${v.weight} ${[...v.keys].sort().join(' ')}\n`);
    nodeAt(set.name).rrsets.set(set.type, {
      name: set.name,
      type: set.type,
      ttl: set.ttl,
      data: set.data,
      ...(set.variants ? { variants: set.variants.map((v) => ({ data: v.data, weight: v.weight })) } : {}),
    });
    records += set.data.length;
    // RFC 4592 section 2.2.2 / RFC 8020: the names between a record and the apex exist (empty non-terminals).
    for (const between of namesBetween(set.name, config.name)) nodeAt(between);
  }
  // After the record sets, which they replace at the same name and type.
  for (const set of glueSets(config)) {
    if (!set.data.length) continue;
    const node = nodeAt(set.name);
    records += set.data.length - (node.rrsets.get(set.type)?.data.length ?? 0);
    node.rrsets.set(set.type, set);
    for (const between of namesBetween(set.name, config.name)) nodeAt(between);
  }
  // Zone cuts last: what lies below one is not this zone's to answer (RFC 1034 section 4.2.1).
  for (const cut of config.cuts ?? []) {
    if (!isInZone(cut.name, config.name) || cut.name === config.name) continue;
    for (const [name, node] of nodes)
      if (name !== cut.name && isInZone(name, cut.name)) {
        records -= [...node.rrsets.values()].reduce((n, set) => n + set.data.length, 0);
        nodes.delete(name);
      }
    const node = nodeAt(cut.name);
    records -= [...node.rrsets.values()].reduce((n, set) => n + set.data.length, 0);
    node.rrsets = new Map([
      [
        T.NS,
        {
          name: cut.name,
          type: T.NS,
          ttl: config.ttl,
          data: cut.nameServers.map((target) => ({ kind: 'name', target })),
        },
      ],
    ]);
    node.cut = true;
    records += cut.nameServers.length;
    for (const between of namesBetween(cut.name, config.name)) nodeAt(between);
  }
  return { zone: new Zone(config.name, nodes, soa), records };
}

/**
 * The glue of the zone's own name servers as RRsets (with the NS TTL), which take the place of
 * records of the same name and type from record sets: the NS set must be reachable.
 */
function glueSets(config: ZoneConfig): RRset[] {
  const out: RRset[] = [];
  for (const g of config.glue ?? []) {
    const name = g.name.toLowerCase().replace(/\.$/, '');
    if (!isInZone(name, config.name)) continue;
    for (const type of ['A', 'AAAA'] as const) {
      const data = g.addresses
        .filter((a) => isIP(a) === (type === 'A' ? 4 : 6))
        .map((a) => parseValue(type, a).data);
      out.push({ name, type: T[type], ttl: config.ttl, data });
    }
  }
  return out;
}
