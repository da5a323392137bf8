// Resource records as the zone holds them: owner name, type, TTL and the
// record data in a form the wire encoder can write without parsing again.
import { parentName } from './name.js';

/** RR TYPE values (RFC 1035 section 3.2.2, RFC 3596, RFC 2782, RFC 6891, RFC 4034, RFC 1995). */
export const T = {
  A: 1,
  NS: 2,
  CNAME: 5,
  SOA: 6,
  TXT: 16,
  AAAA: 28,
  SRV: 33,
  OPT: 41,
  RRSIG: 46,
  NSEC: 47,
  DNSKEY: 48,
  IXFR: 251,
  AXFR: 252,
  ANY: 255,
} as const;

export const TYPE_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(T).map(([name, value]) => [value, name]),
);

export function typeName(type: number): string {
  return TYPE_NAMES[type] ?? `TYPE${type}`;
}

export type RData =
  /** A, AAAA, TXT: the RDATA octets, ready to copy. */
  | { kind: 'bytes'; bytes: Uint8Array }
  /** CNAME, NS: a domain name (compressible, RFC 1035 section 4.1.4). */
  | { kind: 'name'; target: string }
  /** RFC 2782; the target is never compressed (RFC 2782 "Target"). */
  | { kind: 'srv'; priority: number; weight: number; port: number; target: string }
  | {
      kind: 'soa';
      mname: string;
      rname: string;
      serial: number;
      refresh: number;
      retry: number;
      expire: number;
      minimum: number;
    };

/** All records of one owner name and type. RFC 2181 section 5.2: one TTL for the whole set. */
export interface RRset {
  name: string;
  type: number;
  ttl: number;
  data: RData[];
  /** Traffic policy with weights: answers hold one variant, drawn by weight; `data` is their union. */
  variants?: { data: RData[]; weight: number }[];
}

/** One record of a response; `owner` is the name written on the wire. */
export interface RR {
  owner: string;
  type: number;
  ttl: number;
  data: RData;
}

/** Zone-file presentation of one record, for logs and test tables: "a.xcc.test. 30 IN A 10.0.0.1". */
export function presentRR(rr: RR): string {
  return `${fqdn(rr.owner)} ${rr.ttl} IN ${typeName(rr.type)} ${presentData(rr.type, rr.data)}`;
}

export function presentData(type: number, data: RData): string {
  switch (data.kind) {
    case 'name':
      return fqdn(data.target);
    case 'srv':
      return `${data.priority} ${data.weight} ${data.port} ${fqdn(data.target)}`;
    case 'soa':
      return `${fqdn(data.mname)} ${fqdn(data.rname)} ${data.serial} ${data.refresh} ${data.retry} ${data.expire} ${data.minimum}`;
    case 'bytes':
      if (type === T.A) return Array.from(data.bytes).join('.');
      if (type === T.AAAA) return presentIPv6(data.bytes);
      if (type === T.TXT) return presentTxt(data.bytes);
      return `\\# ${data.bytes.length} ${Buffer.from(data.bytes).toString('hex')}`;
  }
}

function fqdn(name: string): string {
  return name === '' ? '.' : `${name}.`;
}

function presentIPv6(bytes: Uint8Array): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return groups.join(':');
}

function presentTxt(bytes: Uint8Array): string {
  const parts: string[] = [];
  for (let i = 0; i < bytes.length;) {
    const len = bytes[i]!;
    parts.push(JSON.stringify(Buffer.from(bytes.subarray(i + 1, i + 1 + len)).toString('utf8')));
    i += 1 + len;
  }
  return parts.join(' ');
}

/** Every name between `name` (exclusive) and `zone` (exclusive): the empty non-terminals it implies. */
export function namesBetween(name: string, zone: string): string[] {
  const out: string[] = [];
  for (let n = parentName(name); n.length > zone.length; n = parentName(n)) out.push(n);
  return out;
}
