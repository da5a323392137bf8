import dnsPacket from 'dns-packet';
import { compileZones } from '../zone/compile.js';
import { recordSet, sourced, zoneConfig, EXAMPLE_RECORDS } from '../zone/fixtures.test-support.js';
import { Responder } from './responder.js';

const W = 'gateway.cluster-a.dev-team.clusters.xcc.test';

function responder(extra: Parameters<typeof recordSet>[1] = []): Responder {
  const built = compileZones(
    sourced(recordSet('example', [...EXAMPLE_RECORDS, ...extra])),
    [zoneConfig()],
    7,
  );
  const r = new Responder({ maxUdpSize: 1232 });
  r.load(built.zones);
  return r;
}

function query(
  name: string,
  type: string,
  opts: { id?: number; edns?: number; flags?: number } = {},
): Buffer {
  return dnsPacket.encode({
    type: 'query',
    id: opts.id ?? 4242,
    flags: opts.flags ?? dnsPacket.RECURSION_DESIRED,
    questions: [{ name, type: type as dnsPacket.RecordType, class: 'IN' }],
    additionals: opts.edns
      ? [{ type: 'OPT', name: '.', udpPayloadSize: opts.edns, flags: 0 } as dnsPacket.Answer]
      : [],
  });
}

function ask(r: Responder, msg: Buffer, transport: 'udp' | 'tcp' = 'udp') {
  const out = r.respond(msg, transport);
  if (!out.response) throw new Error('no response');
  return { raw: out.response, packet: dnsPacket.decode(out.response) };
}

const rdataOf = (p: dnsPacket.Packet) =>
  (p.answers ?? []).map((a) => `${a.name} ${a.type} ${JSON.stringify((a as { data?: unknown }).data)}`);

const rcodeOf = (p: dnsPacket.Packet) => (p as { rcode?: string }).rcode;

describe('Responder', () => {
  const r = responder([
    { name: 'big.xcc.test', type: 'A', values: Array.from({ length: 60 }, (_, i) => `10.1.0.${i}`) },
  ]);

  it('answers from the precomputed template, echoing id, RD and the case of the question', () => {
    const { packet } = ask(r, query('A.Xcc.TEST', 'A', { id: 77 }));
    expect(packet.id).toBe(77);
    expect(packet.flags! & 0x0f).toBe(0);
    expect(packet.flag_aa).toBe(true);
    expect(packet.flag_rd).toBe(true);
    expect(packet.questions).toEqual([{ name: 'A.Xcc.TEST', type: 'A', class: 'IN' }]);
    expect(rdataOf(packet)).toEqual(['A.Xcc.TEST A "10.0.0.1"', 'A.Xcc.TEST A "10.0.0.2"']);
  });

  it('synthesises wildcard answers for names of any length, pointers moved', () => {
    for (const prefix of ['k', 'kuard', 'a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z']) {
      const { packet } = ask(r, query(`${prefix}.${W}`, 'A'));
      expect(rdataOf(packet)).toEqual([`${prefix}.${W} A "10.0.0.5"`, `${prefix}.${W} A "10.0.0.6"`]);
      const nodata = ask(r, query(`${prefix}.${W}`, 'TXT')).packet;
      expect(nodata.authorities?.map((a) => a.name)).toEqual(['xcc.test']);
      const cname = ask(r, query(`${prefix}.wild.xcc.test`, 'AAAA')).packet;
      expect(rdataOf(cname)).toEqual([
        `${prefix}.wild.xcc.test CNAME "a.xcc.test"`,
        'a.xcc.test AAAA "fd00::1"',
      ]);
    }
  });

  it('answers NXDOMAIN with the SOA whose owner is the zone, for any query name', () => {
    const { packet } = ask(r, query('Very.Long.Name.That.Does.Not.Exist.XCC.test', 'A'));
    expect(rcodeOf(packet)).toBe('NXDOMAIN');
    expect(packet.authorities).toEqual([
      {
        name: 'XCC.test',
        type: 'SOA',
        class: 'IN',
        ttl: 10,
        flush: false,
        data: {
          mname: 'ns1.XCC.test',
          rname: 'hostmaster.XCC.test',
          serial: 7,
          refresh: 3600,
          retry: 600,
          expire: 86400,
          minimum: 10,
        },
      },
    ]);
  });

  it('refuses names outside the zone without AA, and zone transfers', () => {
    const out = ask(r, query('example.com', 'A')).packet;
    expect(rcodeOf(out)).toBe('REFUSED');
    expect(out.flag_aa).toBe(false);
    expect(rcodeOf(ask(r, query('xcc.test', 'AXFR')).packet)).toBe('REFUSED');
  });

  it('finds the zone by whole labels: a label holding the apex or a dot is not in it', () => {
    const raw = (...labels: string[]) =>
      Buffer.concat([
        Buffer.from('123401000001000000000000', 'hex'),
        ...labels.map((l) => Buffer.concat([Buffer.of(l.length), Buffer.from(l, 'latin1')])),
        Buffer.from('0000010001', 'hex'),
      ]);
    expect(rcodeOf(ask(r, raw('xcc.test')).packet)).toBe('REFUSED');
    expect(rcodeOf(ask(r, raw('a.XCC', 'test')).packet)).toBe('REFUSED');
    expect(rcodeOf(ask(r, raw('axcc', 'test')).packet)).toBe('REFUSED');
    expect(rcodeOf(ask(r, raw('XCC', 'TEST')).packet)).toBe('NOERROR');
    expect(rcodeOf(ask(r, raw('x', 'xcc', 'test')).packet)).toBe('NXDOMAIN');
  });

  it('echoes EDNS, honours the UDP size offered, truncates when the answer does not fit', () => {
    const plain = ask(r, query('big.xcc.test', 'A')).packet;
    expect(plain.flag_tc).toBe(true);
    expect(plain.answers).toEqual([]);
    expect(plain.additionals).toEqual([]);
    const edns = ask(r, query('big.xcc.test', 'A', { edns: 4096 }));
    expect(edns.packet.flag_tc).toBe(false);
    expect(edns.packet.answers).toHaveLength(60);
    const opt = edns.packet.additionals?.[0] as unknown as { type: string; udpPayloadSize: number };
    expect(opt.type).toBe('OPT');
    expect(opt.udpPayloadSize).toBe(1232);
    expect(ask(r, query('big.xcc.test', 'A', { edns: 600 })).packet.flag_tc).toBe(true);
    expect(ask(r, query('big.xcc.test', 'A'), 'tcp').packet.answers).toHaveLength(60);
  });

  it('reads the OPT record alike wherever it is and whatever follows it', () => {
    const optOf = (raw: Buffer) => raw.subarray(raw.length - 11).toString('hex');
    const plainOpt = ask(r, query('a.xcc.test', 'A', { edns: 1232 })).raw;
    // With an option (a cookie), with octets after it, and after a second additional record.
    const withOption = dnsPacket.encode({
      type: 'query',
      id: 1,
      questions: [{ name: 'a.xcc.test', type: 'A', class: 'IN' }],
      additionals: [
        {
          type: 'OPT',
          name: '.',
          udpPayloadSize: 1232,
          flags: dnsPacket.DNSSEC_OK,
          options: [{ code: 10, data: Buffer.alloc(8, 1) }],
        } as unknown as dnsPacket.Answer, // dns-packet's OptAnswer type asks for fields its encoder does not need
      ],
    });
    // root, OPT, 1232, extended RCODE 0, version 0, DO as asked, no options
    expect(optOf(ask(r, withOption).raw)).toBe('00002904d00000' + '8000' + '0000');
    expect(optOf(plainOpt)).toBe('00002904d00000' + '0000' + '0000');
    const trailing = Buffer.concat([query('a.xcc.test', 'A', { edns: 1232 }), Buffer.of(0)]);
    expect(optOf(ask(r, trailing).raw)).toBe(optOf(plainOpt));
    const second = dnsPacket.encode({
      type: 'query',
      id: 1,
      questions: [{ name: 'a.xcc.test', type: 'A', class: 'IN' }],
      additionals: [
        { type: 'A', name: 'x.', ttl: 1, data: '10.0.0.1' },
        { type: 'OPT', name: '.', udpPayloadSize: 1232, flags: 0 } as dnsPacket.Answer,
      ],
    });
    expect(optOf(ask(r, second).raw)).toBe(optOf(plainOpt));
    // Two OPTs, or one not owned by the root: FORMERR (RFC 6891 section 6.1.1).
    const twice = Buffer.concat([
      query('a.xcc.test', 'A', { edns: 1232 }),
      plainOpt.subarray(plainOpt.length - 11),
    ]);
    twice.writeUInt16BE(2, 10);
    expect(ask(r, twice).raw[3]! & 0x0f).toBe(1);
    const owned = Buffer.from(query('a.xcc.test', 'A', { edns: 1232 }));
    owned[owned.length - 11] = 1;
    expect(ask(r, owned).raw[3]! & 0x0f).toBe(1);
  });

  it('answers BADVERS to EDNS versions other than 0 (RFC 6891 section 6.1.3)', () => {
    const msg = query('a.xcc.test', 'A', { edns: 1232 });
    msg[msg.length - 11 + 6] = 1; // OPT TTL's version octet
    const { raw } = ask(r, msg);
    expect(raw[3]! & 0x0f).toBe(0);
    expect(raw[raw.length - 11 + 5]).toBe(1); // extended RCODE 1 << 4 = 16
  });

  it('answers FORMERR for QDCOUNT other than 1 and NOTIMP for other opcodes; drops responses and runts', () => {
    const two = query('a.xcc.test', 'A');
    two.writeUInt16BE(2, 4);
    expect(ask(r, two).raw[3]! & 0x0f).toBe(1);
    const zero = query('a.xcc.test', 'A');
    zero.writeUInt16BE(0, 4);
    expect(ask(r, zero).raw[3]! & 0x0f).toBe(1);
    const notify = query('a.xcc.test', 'SOA');
    notify[2] = (notify[2]! & 0x87) | (4 << 3);
    const notimp = ask(r, notify);
    expect(notimp.raw[3]! & 0x0f).toBe(4);
    expect((notimp.raw[2]! >> 3) & 0x0f).toBe(4);
    const resp = query('a.xcc.test', 'A');
    resp[2] = resp[2]! | 0x80;
    expect(r.respond(resp, 'udp').response).toBeUndefined();
    expect(r.respond(Buffer.alloc(11), 'udp').response).toBeUndefined();
    const cut = query('a.xcc.test', 'A').subarray(0, 20);
    expect(ask(r, Buffer.from(cut)).raw[3]! & 0x0f).toBe(1);
  });

  it('does not confuse a label containing a dot with two labels', () => {
    const msg = Buffer.from(query('ab.xcc.test', 'A'));
    msg[13 + 1] = 0x2e; // the label "ab" becomes "a.", which must not match "a" + ""
    const out = ask(r, msg).packet;
    expect(rcodeOf(out)).toBe('NXDOMAIN');
  });
});

describe('large record sets', () => {
  const ipv4 = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  const ipv6 = (i: number) => `fd00::${i.toString(16)}`;
  const built = compileZones(
    sourced(
      recordSet('large', [
        { name: '*.pods.xcc.test', type: 'A', values: Array.from({ length: 300 }, (_, i) => ipv4(i)) },
        { name: 'most.xcc.test', type: 'A', values: Array.from({ length: 4000 }, (_, i) => ipv4(i)) },
        { name: 'most.xcc.test', type: 'AAAA', values: Array.from({ length: 2000 }, (_, i) => ipv6(i)) },
        { name: 'toomany.xcc.test', type: 'A', values: Array.from({ length: 5000 }, (_, i) => ipv4(i)) },
        { name: 'fine.xcc.test', type: 'A', values: ['10.9.9.9'] },
      ]),
    ),
    [zoneConfig()],
    7,
  );
  const r = new Responder({ maxUdpSize: 1232 });
  r.load(built.zones);

  it.each([
    ['300 A values over UDP: TC, no records', 'x.pods.xcc.test', 'A', 'udp', true, 0, 'NOERROR'],
    ['300 A values over TCP: all of them', 'x.pods.xcc.test', 'A', 'tcp', false, 300, 'NOERROR'],
    ['4,000 A values over TCP: all of them', 'most.xcc.test', 'A', 'tcp', false, 4000, 'NOERROR'],
    [
      'ANY beyond a TCP message: the first RRset alone (RFC 8482)',
      'most.xcc.test',
      'ANY',
      'tcp',
      false,
      4000,
      'NOERROR',
    ],
    [
      'an RRset beyond a TCP message is skipped, not served in part',
      'toomany.xcc.test',
      'A',
      'tcp',
      false,
      0,
      'NXDOMAIN',
    ],
    ['the rest of the zone is served', 'fine.xcc.test', 'A', 'udp', false, 1, 'NOERROR'],
  ] as const)('%s', (_what, name, type, transport, tc, count, rcode) => {
    const { packet, raw } = ask(r, query(name, type, { edns: 1232 }), transport);
    expect(raw.length).toBeLessThanOrEqual(65535);
    expect([packet.flag_tc, packet.answers?.length ?? 0, rcodeOf(packet)]).toEqual([tc, count, rcode]);
  });

  it('reports the skipped RRset', () => {
    expect(built.problems).toEqual([
      expect.objectContaining({
        record: 'toomany.xcc.test/A',
        reason: expect.stringMatching(/5000 values need 80000 octets/),
      }),
    ]);
  });
});

describe('Responder with zone cuts (ADR 0215)', () => {
  const NS = ['a.shop.ns.xcc.test', 'b.shop.ns.xcc.test'];
  const built = compileZones(
    sourced(
      recordSet('parent', [
        { name: 'www.xcc.test', type: 'A', values: ['10.0.0.1'] },
        // Occluded by the cut: another server's to answer.
        { name: 'old.shop.xcc.test', type: 'A', values: ['10.0.0.9'] },
        { name: 'to-shop.xcc.test', type: 'CNAME', values: ['www.shop.xcc.test'] },
      ]),
    ),
    [
      zoneConfig('xcc.test', {
        glue: NS.map((name, i) => ({ name, addresses: [`192.0.2.${i + 1}`] })),
        cuts: [{ name: 'shop.xcc.test', nameServers: NS }],
      }),
    ],
    7,
  );
  const r = new Responder({ maxUdpSize: 1232 });
  r.load(built.zones);

  it.each(['shop.xcc.test', 'www.shop.xcc.test', 'old.shop.xcc.test', 'A.Very.Deep.Name.Shop.Xcc.Test'])(
    '%s: a referral, without AA, the NS set in authority, the question echoed as asked',
    (name) => {
      for (const type of ['A', 'AAAA', 'NS', 'TXT', 'DS']) {
        const { packet } = ask(r, query(name, type));
        expect(rcodeOf(packet)).toBe('NOERROR');
        expect(packet.flag_aa).toBe(false);
        expect(packet.answers).toEqual([]);
        expect(packet.questions?.[0]?.name).toBe(name);
        // Names compressed against the question keep its case (RFC 4343: case-insensitive).
        const authority = (packet.authorities ?? []).map((a) =>
          `${a.name} ${a.type} ${(a as { data?: unknown }).data as string}`.toLowerCase(),
        );
        expect(authority).toEqual(NS.map((ns) => `shop.xcc.test ns ${ns}`));
      }
    },
  );

  it('answers the rest of the zone authoritatively, the NS names (outside the cut) included', () => {
    const www = ask(r, query('www.xcc.test', 'A')).packet;
    expect(www.flag_aa).toBe(true);
    expect(rdataOf(www)).toEqual(['www.xcc.test A "10.0.0.1"']);
    const glue = ask(r, query(NS[1]!, 'A')).packet;
    expect(glue.flag_aa).toBe(true);
    expect(rdataOf(glue)).toEqual([`${NS[1]} A "192.0.2.2"`]);
    expect(rcodeOf(ask(r, query('nothing.xcc.test', 'A')).packet)).toBe('NXDOMAIN');
    // A CNAME into the cut stops there: the resolver follows it to the part's servers.
    expect(rdataOf(ask(r, query('to-shop.xcc.test', 'A')).packet)).toEqual([
      'to-shop.xcc.test CNAME "www.shop.xcc.test"',
    ]);
  });

  it('the zone model answers as the wire does', () => {
    const zone = built.zones[0]!;
    expect(zone.lookup('www.shop.xcc.test', 1)).toMatchObject({ authoritative: false, answer: [] });
    expect(zone.nodes.has('old.shop.xcc.test')).toBe(false);
  });
});
