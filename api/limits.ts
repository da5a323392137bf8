// Sizes that bound a record set, shared by the operator (which keeps what it
// writes inside them and reports what it leaves out) and the dns-server
// (which skips, and logs, a record that breaks them).
import type { DNSRecord, RecordType } from './dnsrecordset.js';

/**
 * The octets an answer section may take: a DNS message over TCP is at most
 * 65,535 octets (RFC 1035 section 4.2.2), less the header (12), the longest
 * question (a 255-octet name, type and class: 259) and an EDNS OPT record (11).
 * Over UDP a larger answer is sent truncated (TC) and the client asks again over TCP.
 */
export const MAX_ANSWER_OCTETS = 65535 - 12 - 259 - 11;

/**
 * What the operator lets one DNSRecordSet grow to, as JSON: etcd refuses a
 * request over 1.5 MiB (--max-request-bytes, 1,572,864 octets); the rest is
 * left to metadata and managedFields.
 */
export const MAX_RECORDSET_JSON_OCTETS = 1_400_000;

/** Octets of a name in wire form, uncompressed (RFC 1035 section 3.1). */
export function nameWireOctets(name: string): number {
  const trimmed = name.replace(/\.$/, '');
  return trimmed === '' ? 1 : trimmed.length + 2;
}

/**
 * The octets one value of a record takes in an answer, as the dns-server
 * encodes it: the owner is a 2-octet pointer to the question, then type,
 * class, TTL and RDATA length (10); SRV targets are not compressed (RFC 2782),
 * CNAME targets are counted uncompressed (an upper bound).
 */
export function valueWireOctets(type: RecordType, value: string): number {
  switch (type) {
    case 'A':
      return 12 + 4;
    case 'AAAA':
      return 12 + 16;
    case 'CNAME':
      return 12 + nameWireOctets(value);
    case 'SRV':
      return 12 + 6 + nameWireOctets(value.trim().split(/\s+/)[3] ?? '');
    case 'TXT': {
      const octets = Buffer.byteLength(value, 'utf8');
      return 12 + octets + Math.max(1, Math.ceil(octets / 255));
    }
  }
}

/** The octets of the whole answer for a record's name and type. */
export function answerOctets(record: Pick<DNSRecord, 'type' | 'values'>): number {
  let sum = 0;
  for (const v of record.values) sum += valueWireOctets(record.type, v);
  return sum;
}
