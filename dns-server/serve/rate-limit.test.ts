import dnsPacket from 'dns-packet';
import {
  DEFAULT_RATE_LIMIT,
  DROP,
  parseIPv4,
  parseIPv6Prefix,
  ResponseRateLimiter,
  SEND,
  SLIP,
  truncateInPlace,
  type RateLimitOptions,
} from './rate-limit.js';

const query = (name: string, type: dnsPacket.RecordType = 'A') =>
  dnsPacket.encode({ type: 'query', id: 1, flags: 0, questions: [{ name, type, class: 'IN' }] });
const limiter = (over: Partial<RateLimitOptions> = {}) =>
  new ResponseRateLimiter({ ...DEFAULT_RATE_LIMIT, responsesPerSecond: 5, ...over });

/** Verdicts of n responses at one instant. */
function burst(
  rl: ResponseRateLimiter,
  n: number,
  peer: string,
  msg: Buffer,
  at = 0,
  rcode = 0,
  zone = 'z.test',
) {
  return Array.from({ length: n }, () => rl.decide(peer, msg, rcode, zone, at));
}

describe('ResponseRateLimiter', () => {
  it('is off at 0 responses per second', () => {
    const rl = limiter({ responsesPerSecond: 0 });
    expect(rl.enabled).toBe(false);
    expect(burst(rl, 1000, '192.0.2.1', query('a.z.test')).every((v) => v === SEND)).toBe(true);
  });

  it('sends the rate, then drops, every slip-th sent truncated; credit comes back with time', () => {
    const rl = limiter();
    const q = query('a.z.test');
    expect(burst(rl, 5, '192.0.2.1', q)).toEqual([SEND, SEND, SEND, SEND, SEND]);
    expect(burst(rl, 4, '192.0.2.1', q)).toEqual([DROP, SLIP, DROP, SLIP]);
    expect(rl.stats).toMatchObject({ dropped: 2, slipped: 2 });
    // 200 ms at 5 per second: one more.
    expect(burst(rl, 2, '192.0.2.1', q, 200)).toEqual([SEND, DROP]);
    // A second later the bucket is full again, no more than that.
    expect(burst(rl, 6, '192.0.2.1', q, 5_000).filter((v) => v === SEND)).toHaveLength(5);
  });

  it('counts per /24 and per /56: a neighbour shares the bucket, another prefix does not', () => {
    const rl = limiter({ slip: 0 });
    const q = query('a.z.test');
    burst(rl, 5, '192.0.2.1', q);
    expect(rl.decide('192.0.2.200', q, 0, 'z.test', 0)).toBe(DROP);
    expect(rl.decide('::ffff:192.0.2.7', q, 0, 'z.test', 0)).toBe(DROP);
    expect(rl.decide('192.0.3.1', q, 0, 'z.test', 0)).toBe(SEND);
    burst(rl, 5, '2001:db8:0:100::1', q);
    expect(rl.decide('2001:db8:0:1ff::9', q, 0, 'z.test', 0)).toBe(DROP);
    expect(rl.decide('2001:db8:0:200::1', q, 0, 'z.test', 0)).toBe(SEND);
  });

  it('counts per response: another name or type is another bucket, the case of the name is not', () => {
    const rl = limiter({ slip: 0 });
    burst(rl, 5, '192.0.2.1', query('a.z.test'));
    expect(rl.decide('192.0.2.1', query('A.Z.TEST'), 0, 'z.test', 0)).toBe(DROP);
    expect(rl.decide('192.0.2.1', query('b.z.test'), 0, 'z.test', 0)).toBe(SEND);
    expect(rl.decide('192.0.2.1', query('a.z.test', 'AAAA'), 0, 'z.test', 0)).toBe(SEND);
  });

  it('counts every NXDOMAIN of a zone as one response (a random-subdomain flood), and errors as one', () => {
    const rl = limiter({ slip: 0 });
    const nx = Array.from({ length: 8 }, (_, i) =>
      rl.decide('192.0.2.1', query(`r${i}.z.test`), 3, 'z.test', 0),
    );
    expect(nx.filter((v) => v === SEND)).toHaveLength(5);
    const refused = Array.from({ length: 8 }, (_, i) =>
      rl.decide('192.0.2.1', query(`x${i}.example`), 5, undefined, 0),
    );
    expect(refused.filter((v) => v === SEND)).toHaveLength(5);
  });

  it('keeps its memory fixed: a flood of keys far larger than the table evicts, never grows', () => {
    const rl = limiter({ tableSize: 1024 });
    const bytes = rl.tableBytes;
    for (let i = 0; i < 100_000; i++)
      rl.decide(`10.${(i >> 8) & 255}.${i & 255}.1`, query(`n${i}.z.test`), 0, 'z.test', i / 100);
    expect(rl.tableBytes).toBe(bytes);
    expect(bytes).toBeLessThan(20 * 1024);
    expect(rl.stats.evicted).toBeGreaterThan(0);
  });

  it('refuses a table size that is not a power of two', () => {
    expect(() => limiter({ tableSize: 1000 })).toThrow('not a power of two');
  });
});

describe('addresses', () => {
  it.each([
    ['192.0.2.1', 0xc0000201],
    ['0.0.0.0', 0],
    ['255.255.255.255', 0xffffffff],
    ['256.0.0.1', undefined],
    ['1.2.3', undefined],
    ['1.2.3.4.5', undefined],
    ['::1', undefined],
  ])('IPv4 %s', (s, want) => expect(parseIPv4(s)).toBe(want));
  it.each([
    ['2001:db8:0:1ff::9', 56, [0x20010db8, 0x00000100, 0, 0]],
    ['2001:db8::', 64, [0x20010db8, 0, 0, 0]],
    ['::1', 128, [0, 0, 0, 1]],
    ['fe80::1%eth0', 128, [0xfe800000, 0, 0, 1]],
    ['1:2:3:4:5:6:7:8', 128, [0x00010002, 0x00030004, 0x00050006, 0x00070008]],
    ['1::2::3', 56, []],
    ['1:2:3', 56, []],
    ['g::1', 56, []],
  ])('IPv6 %s /%d', (s, bits, want) => expect(parseIPv6Prefix(s, bits)).toEqual(want));
});

describe('truncateInPlace', () => {
  it('keeps the header and question, sets TC, drops every record', () => {
    const response = dnsPacket.encode({
      type: 'response',
      id: 7,
      flags: dnsPacket.AUTHORITATIVE_ANSWER,
      questions: [{ name: 'a.z.test', type: 'A', class: 'IN' }],
      answers: [{ name: 'a.z.test', type: 'A', ttl: 30, data: '192.0.2.1' }],
    });
    const length = truncateInPlace(response, response.length);
    const decoded = dnsPacket.decode(response.subarray(0, length));
    expect(decoded.id).toBe(7);
    expect(decoded.flag_tc).toBe(true);
    expect(decoded.questions).toEqual([{ name: 'a.z.test', type: 'A', class: 'IN' }]);
    expect(decoded.answers).toEqual([]);
  });
});
