// A generated zone, as DNSRecordSet documents for the dns-server and as a
// zone file for NSD, plus queries that exercise it. Deterministic for a seed,
// so a failing differential test or a benchmark can be rerun exactly.
import { xorshift } from './fuzz.js';
import type { DNSRecord, DNSRecordSet } from '../../api/index.js';

export interface GeneratedZone {
  zone: string;
  records: DNSRecord[];
  /** Names that own records (wildcards included), for building queries. */
  owners: string[];
}

export interface ZoneShape {
  /** Plain hosts with A (and some AAAA/TXT) records. */
  hosts: number;
  /** Wildcard gateways "*.gateway.<cluster>.<team>.clusters.<zone>". */
  gateways: number;
}

/** The fuzz tests' xorshift32: small and reproducible; quality is beside the point here. */
export const prng = xorshift;

export function generateZone(shape: ZoneShape, zone = 'xcc.test'): GeneratedZone {
  const ip4 = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  const records: DNSRecord[] = [];
  for (let i = 0; i < shape.hosts; i++) {
    const name = `h${i}.c${i % 17}.${zone}`;
    records.push({ name, type: 'A', values: [ip4(i)] });
    if (i % 3 === 0) records.push({ name, type: 'AAAA', values: [`fd00::${(i % 65535).toString(16)}`] });
    if (i % 5 === 0) records.push({ name, type: 'TXT', ttl: 60, values: [`host ${i}`] });
  }
  for (let g = 0; g < shape.gateways; g++) {
    const base = `gateway.cluster-${g % 7}.team-${g}.clusters.${zone}`;
    records.push({ name: `*.${base}`, type: 'A', values: [ip4(100000 + g), ip4(200000 + g)] });
    if (g % 4 === 0) records.push({ name: `blocked.${base}`, type: 'TXT', values: ['blocks the wildcard'] });
    if (g % 5 === 0) records.push({ name: `*.${base}`, type: 'AAAA', values: [`fd00:1::${g.toString(16)}`] });
  }
  // Hand-picked corners: CNAME chains in and out of the zone, dangling CNAMEs, wildcard
  // CNAMEs, SRV, deep empty non-terminals, an answer too big for 512 or 1232 octets.
  records.push(
    { name: `www.${zone}`, type: 'CNAME', values: [`h1.c1.${zone}`] },
    { name: `chain.${zone}`, type: 'CNAME', values: [`www.${zone}`] },
    { name: `dangling.${zone}`, type: 'CNAME', values: [`missing.${zone}`] },
    { name: `outside.${zone}`, type: 'CNAME', values: ['example.com'] },
    { name: `*.wild.${zone}`, type: 'CNAME', values: [`h2.c2.${zone}`] },
    { name: `to-wild.${zone}`, type: 'CNAME', values: [`x.y.wild.${zone}`] },
    {
      name: `_http._tcp.svc.${zone}`,
      type: 'SRV',
      values: ['0 5 8080 h1.c1.' + zone, '10 1 8081 h2.c2.' + zone],
    },
    { name: `deep.a.b.c.d.${zone}`, type: 'TXT', values: ['deep'] },
    { name: `*.${zone}`, type: 'TXT', values: ['apex wildcard'] },
    { name: `big.${zone}`, type: 'A', values: Array.from({ length: 60 }, (_, i) => ip4(300000 + i)) },
    { name: `mid.${zone}`, type: 'A', values: Array.from({ length: 45 }, (_, i) => ip4(400000 + i)) },
    { name: `long.${zone}`, type: 'TXT', values: ['x'.repeat(200), 'y'.repeat(200)] },
  );
  const owners = [...new Set(records.map((r) => r.name))];
  return { zone, records, owners };
}

/** The records as DNSRecordSet documents of at most `perSet` records each. */
export function asRecordSets(records: DNSRecord[], perSet = 500): DNSRecordSet[] {
  const sets: DNSRecordSet[] = [];
  for (let i = 0; i < records.length; i += perSet)
    sets.push({
      apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
      kind: 'DNSRecordSet',
      metadata: { name: `generated-${i / perSet}`, namespace: 'capi-dns' },
      spec: { records: records.slice(i, i + perSet) },
    });
  return sets;
}

export interface SoaFields {
  mname: string;
  rname: string;
  serial: number;
  refresh: number;
  retry: number;
  expire: number;
  minimum: number;
  ttl: number;
}

/** The same data as an RFC 1035 master file (what NSD reads). */
export function zoneFile(g: GeneratedZone, soa: SoaFields): string {
  const lines = [
    `$ORIGIN ${g.zone}.`,
    `@ ${soa.ttl} IN SOA ${soa.mname}. ${soa.rname}. ${soa.serial} ${soa.refresh} ${soa.retry} ${soa.expire} ${soa.minimum}`,
    `@ ${soa.ttl} IN NS ${soa.mname}.`,
  ];
  for (const r of g.records) {
    const ttl = r.ttl ?? 30;
    for (const v of r.values) {
      const data =
        r.type === 'TXT'
          ? JSON.stringify(v)
          : r.type === 'CNAME'
            ? `${v}.`
            : r.type === 'SRV'
              ? v.replace(/(\S+)$/, '$1.')
              : v;
      lines.push(`${r.name}. ${ttl} IN ${r.type} ${data}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export interface GeneratedQuery {
  name: string;
  type: string;
  /** Offer EDNS with this UDP size; none when undefined. */
  edns?: number;
  tcp?: boolean;
}

/** Queries for the differential test: every owner with its and other types, and the corners around them. */
export function generateQueries(g: GeneratedZone, count: number, seed = 7): GeneratedQuery[] {
  const rnd = prng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const types = ['A', 'AAAA', 'TXT', 'SRV', 'CNAME', 'MX', 'SOA', 'NS', 'CAA'];
  const z = g.zone;
  const mangleCase = (name: string) => [...name].map((c) => (rnd() < 0.3 ? c.toUpperCase() : c)).join('');
  const concrete = (owner: string) =>
    owner.startsWith('*.') ? `${pick(['a', 'kuard', 'x.y', 'p.q.r'])}${owner.slice(1)}` : owner;
  const fixed: GeneratedQuery[] = [
    { name: z, type: 'SOA' },
    { name: z, type: 'NS' },
    { name: z, type: 'A' },
    { name: z.toUpperCase(), type: 'SOA' },
    { name: `a.b.c.d.${z}`, type: 'A' },
    { name: `c.d.${z}`, type: 'TXT' },
    { name: `d.${z}`, type: 'A' },
    { name: `x.deep.a.b.c.d.${z}`, type: 'TXT' },
    { name: `clusters.${z}`, type: 'A' },
    { name: 'example.com', type: 'A' },
    { name: `not${z}`, type: 'A' },
    { name: 'test', type: 'SOA' },
    { name: `big.${z}`, type: 'A' },
    { name: `big.${z}`, type: 'A', edns: 1232 },
    { name: `big.${z}`, type: 'A', edns: 4096 },
    { name: `big.${z}`, type: 'A', tcp: true },
    { name: `mid.${z}`, type: 'A' },
    { name: `mid.${z}`, type: 'A', edns: 1232 },
    { name: `long.${z}`, type: 'TXT' },
    { name: `long.${z}`, type: 'TXT', edns: 512 },
    { name: `www.${z}`, type: 'A' },
    { name: `chain.${z}`, type: 'AAAA' },
    { name: `dangling.${z}`, type: 'A' },
    { name: `outside.${z}`, type: 'A' },
    { name: `to-wild.${z}`, type: 'A' },
    { name: `q.wild.${z}`, type: 'TXT' },
    { name: `_http._tcp.svc.${z}`, type: 'SRV' },
    { name: `nothing.here.${z}`, type: 'A' },
  ];
  const out = [...fixed];
  while (out.length < count) {
    const record = pick(g.records);
    const owner = record.name;
    const roll = rnd();
    let name = concrete(owner);
    if (roll < 0.15)
      name = `sub.${name}`; // below an owner: NXDOMAIN, or a wildcard beneath it
    else if (roll < 0.25) name = name.split('.').slice(1).join('.'); // parents: ENTs, the apex
    out.push({
      name: mangleCase(name),
      type: rnd() < 0.5 ? record.type : pick(types),
      edns: rnd() < 0.5 ? 1232 : undefined,
      tcp: rnd() < 0.1,
    });
  }
  return out;
}
