// A signed zone in zone-file form (RFC 1035 section 5), for dnssec-verify,
// ldns-verify-zone and NSD: the records of SignedZone.records(), the DNSSEC
// types' data in RFC 3597's generic form, which every one of them reads.
import { presentRR, type RR } from '../zone/rr.js';

export function zoneFileOf(apex: string, records: Iterable<RR>): string {
  const lines = [`$ORIGIN ${apex}.`];
  for (const rr of records) lines.push(presentRR(rr));
  return `${lines.join('\n')}\n`;
}
