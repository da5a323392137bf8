import dnsPacket from 'dns-packet';
import { compileZones } from '../zone/compile.js';
import { EXAMPLE_RECORDS, recordSet, sourced, zoneConfig } from '../zone/fixtures.test-support.js';
import { Responder } from './responder.js';
import { signedQueries } from '../transfer/signed-queries.js';
import { HMAC_SHA256, sign, verify, type TsigKey } from '../transfer/tsig.js';

const key: TsigKey = { name: 'xfr-key', algorithm: HMAC_SHA256, secret: Buffer.alloc(32, 7) };
const NOW = 1_800_000_000;
const BIG = {
  name: 'big.xcc.test',
  type: 'A' as const,
  values: Array.from({ length: 40 }, (_, i) => `10.2.0.${i + 1}`),
};

function responder(): Responder {
  const r = new Responder({ maxUdpSize: 1232, signed: signedQueries([key], () => NOW) });
  r.load(compileZones(sourced(recordSet('example', [...EXAMPLE_RECORDS, BIG])), [zoneConfig()], 7).zones);
  return r;
}

function signedQuery(name: string, udpSize?: number): { message: Buffer; mac: Buffer } {
  const msg = dnsPacket.encode({
    type: 'query',
    id: 9,
    questions: [{ name, type: 'A', class: 'IN' }],
    additionals:
      udpSize === undefined ? [] : [{ type: 'OPT', name: '.', udpPayloadSize: udpSize } as dnsPacket.Answer],
  });
  return sign(msg, key, { now: NOW });
}

describe('queries signed with TSIG', () => {
  it('answers signed, within the size the client offers over UDP: TC when the answer and its TSIG do not fit', () => {
    const r = responder();
    for (const udpSize of [undefined, 700]) {
      const q = signedQuery('big.xcc.test', udpSize);
      const out = r.respond(q.message, 'udp');
      const response = Buffer.from(out.response!.subarray(0, out.length));
      // 40 A records are 640 octets of answer alone: too large for 512, and with the TSIG for 700.
      expect(response.length).toBeLessThanOrEqual(udpSize ?? 512);
      expect(response[2]! & 0x02).toBe(0x02);
      expect(verify(response, new Map([[key.name, key]]), NOW, q.mac).ok).toBe(true);
    }
    const q = signedQuery('big.xcc.test', 1232);
    const out = r.respond(q.message, 'udp');
    const whole = dnsPacket.decode(Buffer.from(out.response!.subarray(0, out.length)));
    expect(whole.answers).toHaveLength(40);
    expect(out.length).toBeLessThanOrEqual(1232);
  });

  it('answers a small signed query whole over UDP, and a large one whole over TCP', () => {
    const r = responder();
    const small = r.respond(signedQuery('a.xcc.test').message, 'udp');
    expect(
      dnsPacket.decode(Buffer.from(small.response!.subarray(0, small.length))).answers!.length,
    ).toBeGreaterThan(0);
    const big = r.respond(signedQuery('big.xcc.test').message, 'tcp');
    expect(dnsPacket.decode(Buffer.from(big.response!.subarray(0, big.length))).answers).toHaveLength(40);
  });
});
