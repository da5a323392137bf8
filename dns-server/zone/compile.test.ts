import { compileZones, ParseCache } from './compile.js';
import { presentRR, T } from './rr.js';
import { recordSet, sourced, zoneConfig } from './fixtures.test-support.js';

describe('compileZones', () => {
  it('merges record sets naming the same owner and type, deduplicating values', () => {
    const built = compileZones(
      sourced(
        recordSet('one', [{ name: 'a.xcc.test', type: 'A', values: ['10.0.0.1', '10.0.0.2'] }]),
        recordSet('two', [{ name: 'A.xcc.test.', type: 'A', ttl: 20, values: ['10.0.0.2', '10.0.0.3'] }]),
        recordSet('three', [{ name: 'a.xcc.test', type: 'AAAA', values: ['::1', '0:0::1'] }]),
      ),
      [zoneConfig()],
      1,
    );
    const zone = built.zones[0]!;
    expect(zone.lookup('a.xcc.test', T.A).answer.map(presentRR)).toEqual([
      'a.xcc.test. 20 IN A 10.0.0.1',
      'a.xcc.test. 20 IN A 10.0.0.2',
      'a.xcc.test. 20 IN A 10.0.0.3',
    ]);
    expect(zone.lookup('a.xcc.test', T.AAAA).answer).toHaveLength(1);
    expect(built.problems).toEqual([]);
    expect(built.records).toBe(2 + 4);
  });

  it('serves the glue of in-zone name servers (ADR 0215), in place of records of the same name and type', () => {
    const ns = 'c1.shop.ns.xcc.test';
    const built = compileZones(
      sourced(recordSet('one', [{ name: ns, type: 'A', values: ['10.9.9.9'] }])),
      [
        zoneConfig('xcc.test', {
          nameServers: [ns],
          glue: [{ name: ns, addresses: ['192.0.2.1', '2001:db8::1'] }],
        }),
      ],
      1,
    );
    const zone = built.zones[0]!;
    expect(zone.lookup('xcc.test', T.NS).answer.map(presentRR)).toEqual([`xcc.test. 30 IN NS ${ns}.`]);
    expect(zone.lookup(ns, T.A).answer.map(presentRR)).toEqual([`${ns}. 30 IN A 192.0.2.1`]);
    expect(zone.lookup(ns, T.AAAA).answer.map(presentRR)).toEqual([`${ns}. 30 IN AAAA 2001:db8:0:0:0:0:0:1`]);
    // The names between exist (RFC 8020): NODATA, not NXDOMAIN.
    expect(zone.lookup('ns.xcc.test', T.A).rcode).toBe(0);
  });

  it('reports and skips bad records, keeping the good ones', () => {
    const bad = [
      { name: 'b.xcc.test', type: 'A', values: ['10.0.0.256'] },
      { name: 'b.xcc.test', type: 'AAAA', values: ['10.0.0.1'] },
      { name: 'b.xcc.test', type: 'SRV', values: ['0 5 80'] },
      { name: 'b.xcc.test', type: 'SRV', values: ['0 5 65536 a.xcc.test'] },
      { name: 'b.xcc.test', type: 'SRV', values: ['x 5 80 a.xcc.test'] },
      { name: 'b.xcc.test', type: 'MX', values: ['10 a.xcc.test'] },
      { name: 'b.xcc.test', type: 'A', ttl: -1, values: ['10.0.0.1'] },
      { name: 'b.xcc.test', type: 'A', ttl: 2 ** 31, values: ['10.0.0.1'] },
      { name: 'b.xcc.test', type: 'A', values: [] },
      { name: 'b..xcc.test', type: 'A', values: ['10.0.0.1'] },
      { name: 'b.*.xcc.test', type: 'A', values: ['10.0.0.1'] },
      { name: `${'x'.repeat(64)}.xcc.test`, type: 'A', values: ['10.0.0.1'] },
      { name: 'elsewhere.example', type: 'A', values: ['10.0.0.1'] },
      { name: 'c.xcc.test', type: 'CNAME', values: ['a.xcc.test', 'b.xcc.test'] },
      { name: 'c.xcc.test', type: 'CNAME', values: ['bad name'] },
      null,
      'text',
      { name: 'ok.xcc.test', type: 'SRV', values: ['1 2 3 .', ' 10  20 30 Target.xcc.test. '] },
    ];
    const built = compileZones(
      [
        { source: 'file:x', set: recordSet('x', bad as never) },
        { source: 'file:y', set: { metadata: { name: 'y' } } as never },
      ],
      [zoneConfig()],
      1,
    );
    expect(built.problems).toHaveLength(bad.length - 1 + 1);
    expect(built.problems[0]).toEqual({
      source: 'file:x',
      record: 'b.xcc.test/A',
      reason: '"10.0.0.256" is not an IPv4 address',
    });
    expect(built.zones[0]!.lookup('ok.xcc.test', T.SRV).answer.map(presentRR)).toEqual([
      'ok.xcc.test. 30 IN SRV 1 2 3 .',
      'ok.xcc.test. 30 IN SRV 10 20 30 target.xcc.test.',
    ]);
    expect(built.zones[0]!.lookup('b.xcc.test', T.A).rcode).toBe(3);
  });

  it('lets other data win over a CNAME at the same name, and picks one of several CNAME targets', () => {
    const built = compileZones(
      sourced(
        recordSet('one', [
          { name: 'x.xcc.test', type: 'CNAME', values: ['a.xcc.test'] },
          { name: 'x.xcc.test', type: 'A', values: ['10.0.0.1'] },
          { name: 'y.xcc.test', type: 'CNAME', values: ['b.xcc.test'] },
        ]),
        recordSet('two', [{ name: 'y.xcc.test', type: 'CNAME', values: ['a.xcc.test'] }]),
      ),
      [zoneConfig()],
      1,
    );
    const zone = built.zones[0]!;
    expect(zone.lookup('x.xcc.test', T.CNAME).answer).toEqual([]);
    expect(zone.lookup('y.xcc.test', T.CNAME).answer.map(presentRR)).toEqual([
      'y.xcc.test. 30 IN CNAME a.xcc.test.',
    ]);
    expect(built.problems.map((p) => p.record)).toEqual(['x.xcc.test/CNAME', 'y.xcc.test/CNAME']);
  });

  it('puts records in the most specific zone and changes the fingerprint only when data changes', () => {
    const sets = sourced(
      recordSet('one', [
        { name: 'a.xcc.test', type: 'A', values: ['10.0.0.1'] },
        { name: 'a.sub.xcc.test', type: 'A', values: ['10.0.0.2'] },
      ]),
    );
    const zones = [zoneConfig(), zoneConfig('sub.xcc.test')];
    const first = compileZones(sets, zones, 1);
    expect(first.zones[1]!.lookup('a.sub.xcc.test', T.A).answer).toHaveLength(1);
    expect(first.zones[0]!.nodes.has('a.sub.xcc.test')).toBe(false);
    expect(compileZones([...sets].reverse(), zones, 2).fingerprint).toBe(first.fingerprint);
    const changed = sourced(recordSet('one', [{ name: 'a.xcc.test', type: 'A', values: ['10.0.0.9'] }]));
    expect(compileZones(changed, zones, 1).fingerprint).not.toBe(first.fingerprint);
  });

  it('splits TXT values longer than 255 octets into several character-strings', () => {
    const long = 'x'.repeat(300);
    const built = compileZones(
      sourced(recordSet('t', [{ name: 't.xcc.test', type: 'TXT', values: [long] }])),
      [zoneConfig()],
      1,
    );
    expect(presentRR(built.zones[0]!.lookup('t.xcc.test', T.TXT).answer[0]!)).toBe(
      `t.xcc.test. 30 IN TXT "${'x'.repeat(255)}" "${'x'.repeat(45)}"`,
    );
  });

  describe('with a ParseCache', () => {
    const versioned = (uid: string, resourceVersion: string, value: string) => ({
      ...recordSet('one', [{ name: 'a.xcc.test', type: 'A', values: [value] }]),
      metadata: { name: 'one', namespace: 'capi-dns', uid, resourceVersion },
    });
    const a = (built: ReturnType<typeof compileZones>) =>
      built.zones[0]!.lookup('a.xcc.test', T.A).answer.map(presentRR);

    it('parses a set again only when its uid or resourceVersion changes', () => {
      const cache = new ParseCache();
      const build = (set: ReturnType<typeof versioned>) =>
        compileZones([{ source: 'k8s:one', set }], [zoneConfig()], 1, cache);
      expect(a(build(versioned('u1', '1', '10.0.0.1')))).toEqual(['a.xcc.test. 30 IN A 10.0.0.1']);
      // Same version, other content: only possible if the cache is keyed wrongly; shows it is reused.
      expect(a(build(versioned('u1', '1', '10.0.0.2')))).toEqual(['a.xcc.test. 30 IN A 10.0.0.1']);
      expect(a(build(versioned('u1', '2', '10.0.0.2')))).toEqual(['a.xcc.test. 30 IN A 10.0.0.2']);
      // Deleted and created again under the same name: a new uid, maybe an old resourceVersion.
      expect(a(build(versioned('u2', '2', '10.0.0.3')))).toEqual(['a.xcc.test. 30 IN A 10.0.0.3']);
    });

    it('never reuses sets without a version, forgets sources gone, and starts over for other zones', () => {
      const cache = new ParseCache();
      const plain = (value: string) =>
        sourced(recordSet('one', [{ name: 'a.xcc.test', type: 'A', values: [value] }]));
      compileZones(plain('10.0.0.1'), [zoneConfig()], 1, cache);
      expect(a(compileZones(plain('10.0.0.2'), [zoneConfig()], 1, cache))).toEqual([
        'a.xcc.test. 30 IN A 10.0.0.2',
      ]);
      expect(cache.size).toBe(0);

      const set = versioned('u1', '1', '10.0.0.1');
      compileZones([{ source: 'k8s:one', set }], [zoneConfig()], 1, cache);
      expect(cache.size).toBe(1);
      compileZones([], [zoneConfig()], 1, cache);
      expect(cache.size).toBe(0);

      compileZones([{ source: 'k8s:one', set }], [zoneConfig()], 1, cache);
      const zones = [zoneConfig(), zoneConfig('a.xcc.test')];
      const built = compileZones([{ source: 'k8s:one', set }], zones, 1, cache);
      expect(built.zones[1]!.lookup('a.xcc.test', T.A).answer).toHaveLength(1);
    });

    it('keeps sets only up to its record budget; past it, sets are parsed, served and let go', () => {
      const cache = new ParseCache(2);
      const set = (name: string, uid: string, values: string[]) => ({
        source: `k8s:${name}`,
        set: {
          ...recordSet(
            name,
            values.map((v, i) => ({ name: `${name}${i}.xcc.test`, type: 'A', values: [v] })),
          ),
          metadata: { name, namespace: 'capi-dns', uid, resourceVersion: '1' },
        },
      });
      const input = [set('one', 'u1', ['10.0.0.1', '10.0.0.2']), set('two', 'u2', ['10.0.0.3'])];
      const built = compileZones(input, [zoneConfig()], 1, cache);
      expect(built.zones[0]!.lookup('two0.xcc.test', T.A).answer.map(presentRR)).toEqual([
        'two0.xcc.test. 30 IN A 10.0.0.3',
      ]);
      expect(cache.size).toBe(1);
      // "one" leaves: its budget goes to "two".
      compileZones([input[1]!], [zoneConfig()], 1, cache);
      compileZones([input[1]!], [zoneConfig()], 1, cache);
      expect(cache.size).toBe(1);
    });

    it('keeps reporting the problems of a set it does not parse again', () => {
      const cache = new ParseCache();
      const bad = { ...versioned('u1', '1', '10.0.0.256') };
      const build = () => compileZones([{ source: 'k8s:one', set: bad }], [zoneConfig()], 1, cache);
      expect(build().problems).toHaveLength(1);
      expect(build().problems).toEqual([
        { source: 'k8s:one', record: 'a.xcc.test/A', reason: '"10.0.0.256" is not an IPv4 address' },
      ]);
    });
  });
});
