// Lookup table in CoreDNS's shape: {qname, qtype, rcode, answer, authority},
// against the in-memory zone (no wire format, no sockets).
import { normalizeName } from './name.js';
import { presentRR } from './rr.js';
import { LOOKUP_CASES as cases } from './lookup-cases.test-support.js';
import { exampleZones } from './fixtures.test-support.js';

describe('zone lookup', () => {
  const [zone] = exampleZones().zones;

  it.each(cases)('$qname $qtype', (c) => {
    const got = zone!.lookup(normalizeName(c.qname), c.qtype);
    expect({
      rcode: got.rcode,
      answer: got.answer.map(presentRR),
      authority: got.authority.map(presentRR),
    }).toEqual({
      rcode: c.rcode,
      answer: c.answer ?? [],
      authority: c.authority ?? [],
    });
  });
});
