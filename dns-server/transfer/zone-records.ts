// What a zone transfer hands out: the zone's records as this dns-server
// serves them (its own view: its probes chose the tiers, ADR 0216), as one
// list. This is the only place a transfer reads the compiled zone, so that what
// is added to a zone's content later (DNSSEC's RRSIG, NSEC, DNSKEY) joins the
// transfer by extending this one function.
import type { Zone } from '../zone/zone.js';
import type { SignedZone } from '../dnssec/signed-zone.js';
import { T, type RR } from '../zone/rr.js';

/**
 * Every record of the zone except the apex SOA, which the transfer writes first and last (RFC
 * 5936 section 2.2). A weighted RRset is handed out whole (the union of its variants): a
 * secondary cannot draw among them, so it answers with every candidate of the answering tier. A
 * signed zone hands out its RRSIGs with it (over those same whole RRsets), its NSEC chain and DNSKEY.
 */
export function transferRecordsOf(zone: Zone, signed?: SignedZone): { soa: RR; records: RR[] } {
  const records: RR[] = [];
  let soa: RR | undefined;
  if (signed)
    for (const rr of signed.records()) {
      if (rr.type === T.SOA && rr.owner === zone.name) soa = rr;
      else records.push(rr);
    }
  else
    for (const node of zone.nodes.values())
      for (const set of node.rrsets.values())
        for (const data of set.data) {
          const rr: RR = { owner: node.name, type: set.type, ttl: set.ttl, data };
          if (set.type === T.SOA && node.name === zone.name) soa = rr;
          else records.push(rr);
        }
  soa ??= { owner: zone.name, type: T.SOA, ttl: zone.soa.ttl, data: zone.soa.data[0]! };
  return { soa, records };
}
