import dnsPacket from 'dns-packet';
import { probeTargetId, type DNSRecord } from '../../api/index.js';
import { compileZones } from '../zone/compile.js';
import { HTTP_CHECK as CHECK, recordSet, sourced, zoneConfig } from '../zone/fixtures.test-support.js';
import { Responder } from './responder.js';

const NAME = 'shop.xcc.test';

const candidate = (cluster: string, address: string, tier: number, weight: number): DNSRecord => ({
  name: NAME,
  type: 'A',
  values: [address],
  policy: { cluster, tier, weight, healthCheck: CHECK },
});
const down = (...addresses: string[]) => new Set(addresses.map((a) => probeTargetId(a, CHECK)));

// The draw happens here, in the responder: a random index into a table made at build time.
describe('weighted answers', () => {
  const weighted = [
    candidate('dev/a', '10.0.0.1', 0, 3),
    candidate('dev/b', '10.0.0.2', 0, 1),
    candidate('dev/c', '10.0.0.3', 0, 0),
    candidate('dev/d', '10.0.0.4', 1, 5),
  ];

  function shares(unhealthy = new Set<string>(), queries = 10_000): Map<string, number> {
    const built = compileZones(
      sourced(...weighted.map((r, i) => recordSet(`s${i}`, [r]))),
      [zoneConfig()],
      1,
      undefined,
      unhealthy,
    );
    const r = new Responder({ maxUdpSize: 1232 });
    r.load(built.zones);
    const msg = dnsPacket.encode({
      type: 'query',
      id: 1,
      questions: [{ name: NAME, type: 'A', class: 'IN' }],
    });
    const counts = new Map<string, number>();
    for (let i = 0; i < queries; i++) {
      const answer = dnsPacket.decode(r.respond(msg, 'udp').response!).answers ?? [];
      const key = answer.map((a) => String((a as { data?: unknown }).data)).join(',');
      counts.set(key, (counts.get(key) ?? 0) + 1 / queries);
    }
    return counts;
  }

  it('answers one candidate per answer, drawn by weight, within ±2 % over 10,000 queries', () => {
    const s = shares();
    expect([...s.keys()].sort()).toEqual(['10.0.0.1', '10.0.0.2']);
    expect(Math.abs(s.get('10.0.0.1')! - 0.75)).toBeLessThan(0.02);
    expect(Math.abs(s.get('10.0.0.2')! - 0.25)).toBeLessThan(0.02);
  });

  it('answers weight 0 only when no other candidate of its tier is healthy', () => {
    expect([...shares(down('10.0.0.1', '10.0.0.2'), 100).keys()]).toEqual(['10.0.0.3']);
    expect([...shares(down('10.0.0.1', '10.0.0.2', '10.0.0.3'), 100).keys()]).toEqual(['10.0.0.4']);
  });
});
