// The lookup table of zone/lookup-cases.test-support.ts against the responder: each case
// asked as a query packet, the response decoded with dns-packet (not our own
// parser) and written in zone-file presentation, so the wire layer's
// precomputed answers are held to the same cases as the zone's lookup.
import dnsPacket from 'dns-packet';
import { LOOKUP_CASES as cases } from '../zone/lookup-cases.test-support.js';
import { TYPE_NAMES } from '../zone/rr.js';
import { exampleZones } from '../zone/fixtures.test-support.js';
import { Responder } from './responder.js';

/** dns-packet spells a type it does not know UNKNOWN_<number>. */
const typeName = (type: number): dnsPacket.RecordType =>
  (TYPE_NAMES[type] ?? `UNKNOWN_${type}`) as dnsPacket.RecordType;

/** Names come back in the case of the question (RFC 4343 section 4.1); the table is in lower case. */
const fqdn = (name: string): string => `${name.toLowerCase()}.`;

/** "fd00::1" → "fd00:0:0:0:0:0:0:1", as the table writes IPv6 addresses. */
function expandIPv6(address: string): string {
  const [head = '', tail] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((group) => parseInt(group, 16).toString(16)).join(':');
}

function presentData(a: dnsPacket.Answer): string {
  switch (a.type) {
    case 'A':
      return a.data;
    case 'AAAA':
      return expandIPv6(a.data);
    case 'CNAME':
    case 'NS':
      return fqdn(a.data);
    case 'SRV':
      return `${a.data.priority ?? 0} ${a.data.weight ?? 0} ${a.data.port} ${fqdn(a.data.target)}`;
    case 'SOA': {
      const d = a.data;
      return `${fqdn(d.mname)} ${fqdn(d.rname)} ${d.serial} ${d.refresh} ${d.retry} ${d.expire} ${d.minimum}`;
    }
    case 'TXT': {
      const strings = Array.isArray(a.data) ? a.data : [a.data];
      return strings.map((s) => JSON.stringify(s.toString())).join(' ');
    }
    default:
      throw new Error(`no presentation for ${a.type} in this table`);
  }
}

function present(a: dnsPacket.Answer): string {
  if (a.type === 'OPT') throw new Error('an OPT record outside the additional section');
  return `${fqdn(a.name)} ${a.ttl} IN ${a.type} ${presentData(a)}`;
}

describe('responder lookup (the zone lookup table, on the wire)', () => {
  const responder = new Responder({ maxUdpSize: 1232 });
  responder.load(exampleZones().zones);

  it.each(cases)('$qname $qtype', (c) => {
    const query = dnsPacket.encode({
      type: 'query',
      id: 4242,
      flags: dnsPacket.RECURSION_DESIRED,
      questions: [{ name: c.qname, type: typeName(c.qtype), class: 'IN' }],
    });
    // TCP: no case of the table is about truncation.
    const { response } = responder.respond(query, 'tcp');
    if (!response) throw new Error(`no response to ${c.qname}`);
    const got = dnsPacket.decode(response);
    expect({
      rcode: (got.flags ?? 0) & 0x0f,
      answer: (got.answers ?? []).map(present),
      authority: (got.authorities ?? []).map(present),
    }).toEqual({
      rcode: c.rcode,
      answer: c.answer ?? [],
      authority: c.authority ?? [],
    });
  });
});
