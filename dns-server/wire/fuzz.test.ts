// In-process robustness: the responder never throws, and whatever it sends
// back is a response to the query it got (same ID, QR set) that decodes.
import dnsPacket from 'dns-packet';
import { compileZones } from '../zone/compile.js';
import { EXAMPLE_RECORDS, recordSet, sourced, zoneConfig } from '../zone/fixtures.test-support.js';
import { mutatedPackets } from '../../test/support/fuzz.js';
import { Responder } from './responder.js';

function seeds(): Buffer[] {
  const names = [
    'a.xcc.test',
    'Kuard.gateway.cluster-a.dev-team.clusters.xcc.test',
    'www.xcc.test',
    'nope.xcc.test',
    'xcc.test',
    'example.com',
  ];
  const types = ['A', 'AAAA', 'SRV', 'TXT', 'ANY', 'SOA'] as const;
  return names.flatMap((name, i) =>
    types.map((type, j) =>
      dnsPacket.encode({
        type: 'query',
        id: i * 16 + j,
        flags: dnsPacket.RECURSION_DESIRED,
        questions: [{ name, type: type as dnsPacket.RecordType, class: 'IN' }],
        additionals:
          j % 2 ? [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: 0 } as dnsPacket.Answer] : [],
      }),
    ),
  );
}

describe('Responder with random and mutated packets', () => {
  const responder = new Responder({ maxUdpSize: 1232 });
  responder.load(compileZones(sourced(recordSet('example', EXAMPLE_RECORDS)), [zoneConfig()], 1).zones);

  it('never throws, and every response answers its query', () => {
    let answered = 0;
    const wrong: string[] = [];
    for (const msg of mutatedPackets(seeds(), 200_000, 42)) {
      const transport = msg.length % 2 ? 'udp' : 'tcp';
      const { response } = responder.respond(msg, transport);
      if (!response) continue;
      answered++;
      const bad =
        response.readUInt16BE(0) !== msg.readUInt16BE(0)
          ? 'ID differs'
          : (response[2]! & 0x80) === 0
            ? 'QR not set'
            : transport === 'udp' && response.length > 1232
              ? 'UDP response too long'
              : undefined;
      if (bad) wrong.push(`${bad}: ${msg.toString('hex')}`);
      // Every 50th full answer is decoded completely.
      if (answered % 50 === 0 && response.readUInt16BE(4) === 1 && (response[3]! & 0x0f) !== 1) {
        try {
          dnsPacket.decode(response);
        } catch (err) {
          wrong.push(`does not decode (${(err as Error).message}): ${msg.toString('hex')}`);
        }
      }
    }
    expect(wrong.slice(0, 5)).toEqual([]);
    expect(answered).toBeGreaterThan(100_000);
  });
});
