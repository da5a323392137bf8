// The lookup table in CoreDNS's shape: {qname, qtype, rcode, answer, authority}
// over the zone of fixtures.test-support.ts (EXAMPLE_RECORDS), in zone-file presentation.
// Run against the in-memory zone (zone/lookup.test.ts) and against the
// responder on the wire (wire/lookup.test.ts): both layers answer alike.
// Named *.test-support.ts so that tsconfig.build.json leaves it out of dist/
// and the images.
import { T } from './rr.js';
import { RCODE } from './zone.js';

const SOA = 'xcc.test. 10 IN SOA ns1.xcc.test. hostmaster.xcc.test. 7 3600 600 86400 10';
const W = 'gateway.cluster-a.dev-team.clusters.xcc.test';

export interface LookupCase {
  qname: string;
  qtype: number;
  rcode: number;
  answer?: string[];
  authority?: string[];
}

export const LOOKUP_CASES: LookupCase[] = [
  {
    qname: 'a.xcc.test',
    qtype: T.A,
    rcode: RCODE.NOERROR,
    answer: ['a.xcc.test. 30 IN A 10.0.0.1', 'a.xcc.test. 30 IN A 10.0.0.2'],
  },
  {
    qname: 'A.XCC.Test.',
    qtype: T.A,
    rcode: RCODE.NOERROR,
    answer: ['a.xcc.test. 30 IN A 10.0.0.1', 'a.xcc.test. 30 IN A 10.0.0.2'],
  },
  {
    qname: 'a.xcc.test',
    qtype: T.AAAA,
    rcode: RCODE.NOERROR,
    answer: ['a.xcc.test. 60 IN AAAA fd00:0:0:0:0:0:0:1'],
  },
  // NODATA: the name exists, the type does not (RFC 2308 section 2.2).
  { qname: 'a.xcc.test', qtype: T.TXT, rcode: RCODE.NOERROR, authority: [SOA] },
  { qname: 'a.xcc.test', qtype: 99, rcode: RCODE.NOERROR, authority: [SOA] },
  // NXDOMAIN (RFC 2308 section 2.1).
  { qname: 'nope.xcc.test', qtype: T.A, rcode: RCODE.NXDOMAIN, authority: [SOA] },
  { qname: 'b.a.xcc.test', qtype: T.A, rcode: RCODE.NXDOMAIN, authority: [SOA] },
  // Empty non-terminals exist (RFC 8020): NODATA, not NXDOMAIN.
  { qname: 'x.y.z.xcc.test', qtype: T.A, rcode: RCODE.NOERROR, authority: [SOA] },
  { qname: 'z.xcc.test', qtype: T.TXT, rcode: RCODE.NOERROR, authority: [SOA] },
  { qname: W, qtype: T.A, rcode: RCODE.NOERROR, authority: [SOA] },
  { qname: 'clusters.xcc.test', qtype: T.A, rcode: RCODE.NOERROR, authority: [SOA] },
  // Wildcards (RFC 4592): owner is the query name, one or several labels.
  {
    qname: `kuard.${W}`,
    qtype: T.A,
    rcode: RCODE.NOERROR,
    answer: [`kuard.${W}. 30 IN A 10.0.0.5`, `kuard.${W}. 30 IN A 10.0.0.6`],
  },
  {
    qname: `a.b.c.${W}`,
    qtype: T.A,
    rcode: RCODE.NOERROR,
    answer: [`a.b.c.${W}. 30 IN A 10.0.0.5`, `a.b.c.${W}. 30 IN A 10.0.0.6`],
  },
  { qname: `kuard.${W}`, qtype: T.AAAA, rcode: RCODE.NOERROR, authority: [SOA] },
  {
    qname: `*.${W}`,
    qtype: T.A,
    rcode: RCODE.NOERROR,
    answer: [`*.${W}. 30 IN A 10.0.0.5`, `*.${W}. 30 IN A 10.0.0.6`],
  },
  // An existing name blocks the wildcard, also for the types it lacks, and below it (RFC 4592 section 2.2.1).
  { qname: `blocked.${W}`, qtype: T.A, rcode: RCODE.NOERROR, authority: [SOA] },
  { qname: `blocked.${W}`, qtype: T.TXT, rcode: RCODE.NOERROR, answer: [`blocked.${W}. 30 IN TXT "here"`] },
  { qname: `x.blocked.${W}`, qtype: T.A, rcode: RCODE.NXDOMAIN, authority: [SOA] },
  // CNAME, chased inside the zone (RFC 1034 section 4.3.2).
  {
    qname: 'www.xcc.test',
    qtype: T.A,
    rcode: RCODE.NOERROR,
    answer: [
      'www.xcc.test. 30 IN CNAME a.xcc.test.',
      'a.xcc.test. 30 IN A 10.0.0.1',
      'a.xcc.test. 30 IN A 10.0.0.2',
    ],
  },
  {
    qname: 'www.xcc.test',
    qtype: T.CNAME,
    rcode: RCODE.NOERROR,
    answer: ['www.xcc.test. 30 IN CNAME a.xcc.test.'],
  },
  {
    qname: 'www.xcc.test',
    qtype: T.TXT,
    rcode: RCODE.NOERROR,
    answer: ['www.xcc.test. 30 IN CNAME a.xcc.test.'],
    authority: [SOA],
  },
  {
    qname: 'chain.xcc.test',
    qtype: T.AAAA,
    rcode: RCODE.NOERROR,
    answer: [
      'chain.xcc.test. 30 IN CNAME www.xcc.test.',
      'www.xcc.test. 30 IN CNAME a.xcc.test.',
      'a.xcc.test. 60 IN AAAA fd00:0:0:0:0:0:0:1',
    ],
  },
  // RFC 6604: the RCODE of the end of the chain.
  {
    qname: 'dangling.xcc.test',
    qtype: T.A,
    rcode: RCODE.NXDOMAIN,
    answer: ['dangling.xcc.test. 30 IN CNAME missing.xcc.test.'],
    authority: [SOA],
  },
  {
    qname: 'outside.xcc.test',
    qtype: T.A,
    rcode: RCODE.NOERROR,
    answer: ['outside.xcc.test. 30 IN CNAME example.com.'],
  },
  {
    qname: 'loop1.xcc.test',
    qtype: T.A,
    rcode: RCODE.NOERROR,
    answer: ['loop1.xcc.test. 30 IN CNAME loop2.xcc.test.', 'loop2.xcc.test. 30 IN CNAME loop1.xcc.test.'],
  },
  {
    qname: 'q.wild.xcc.test',
    qtype: T.A,
    rcode: RCODE.NOERROR,
    answer: [
      'q.wild.xcc.test. 30 IN CNAME a.xcc.test.',
      'a.xcc.test. 30 IN A 10.0.0.1',
      'a.xcc.test. 30 IN A 10.0.0.2',
    ],
  },
  {
    qname: '_http._tcp.svc.xcc.test',
    qtype: T.SRV,
    rcode: RCODE.NOERROR,
    answer: ['_http._tcp.svc.xcc.test. 30 IN SRV 0 5 8080 a.xcc.test.'],
  },
  // Apex: synthesised SOA and NS.
  {
    qname: 'xcc.test',
    qtype: T.SOA,
    rcode: RCODE.NOERROR,
    answer: ['xcc.test. 30 IN SOA ns1.xcc.test. hostmaster.xcc.test. 7 3600 600 86400 10'],
  },
  { qname: 'xcc.test', qtype: T.NS, rcode: RCODE.NOERROR, answer: ['xcc.test. 30 IN NS ns1.xcc.test.'] },
  { qname: 'xcc.test', qtype: T.A, rcode: RCODE.NOERROR, authority: [SOA] },
  // ANY: every RRset at the name.
  {
    qname: 'a.xcc.test',
    qtype: T.ANY,
    rcode: RCODE.NOERROR,
    answer: [
      'a.xcc.test. 30 IN A 10.0.0.1',
      'a.xcc.test. 30 IN A 10.0.0.2',
      'a.xcc.test. 60 IN AAAA fd00:0:0:0:0:0:0:1',
    ],
  },
  {
    qname: 'xcc.test',
    qtype: T.ANY,
    rcode: RCODE.NOERROR,
    answer: [
      'xcc.test. 30 IN SOA ns1.xcc.test. hostmaster.xcc.test. 7 3600 600 86400 10',
      'xcc.test. 30 IN NS ns1.xcc.test.',
    ],
  },
  { qname: 'z.xcc.test', qtype: T.ANY, rcode: RCODE.NOERROR, authority: [SOA] },
];
