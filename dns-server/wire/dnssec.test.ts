import dnsPacket from 'dns-packet';
import { probeTargetId, type DNSRecord } from '../../api/index.js';
import { generateKeyPem, parseKey } from '../dnssec/key.js';
import { SignatureCache } from '../dnssec/rrsig.js';
import { SignedZone } from '../dnssec/signed-zone.js';
import { compileZones } from '../zone/compile.js';
import {
  EXAMPLE_RECORDS,
  HTTP_CHECK,
  recordSet,
  sourced,
  zoneConfig,
} from '../zone/fixtures.test-support.js';
import { Decision, Responder } from './responder.js';
import type { ZoneSigning } from './served.js';

const KEY = parseKey(generateKeyPem());
const NOW = 1_800_000_000;
const WEIGHTED: DNSRecord[] = [
  {
    name: 'shop.xcc.test',
    type: 'A',
    values: ['10.1.0.1'],
    policy: { cluster: 'a', tier: 0, weight: 1, healthCheck: HTTP_CHECK },
  },
  {
    name: 'shop.xcc.test',
    type: 'A',
    values: ['10.1.0.2'],
    policy: { cluster: 'b', tier: 0, weight: 1, healthCheck: HTTP_CHECK },
  },
];
const BIG: DNSRecord = {
  name: 'big.xcc.test',
  type: 'A',
  values: Array.from({ length: 40 }, (_, i) => `10.2.0.${i + 1}`),
};

function zones(unhealthy = new Set<string>(), extra: DNSRecord[] = []) {
  return compileZones(
    sourced(recordSet('example', [...EXAMPLE_RECORDS, ...WEIGHTED, BIG, ...extra])),
    [zoneConfig()],
    7,
    undefined,
    unhealthy,
  ).zones;
}

function responder(signing?: ZoneSigning, unhealthy?: Set<string>, extra?: DNSRecord[]): Responder {
  const r = new Responder({ maxUdpSize: 1232 });
  r.load(zones(unhealthy, extra), signing);
  return r;
}

const signing = (signatures = new SignatureCache()): ZoneSigning => ({
  keys: new Map([['xcc.test', KEY]]),
  signatures,
  now: NOW,
});

/** A response's octets in hex, undefined when there is none. */
function hex(out: { response: Buffer | undefined; length: number }): string | undefined {
  return out.response && Buffer.from(out.response.subarray(0, out.length)).toString('hex');
}

function query(name: string, type: string, opts: { do?: boolean; edns?: number } = {}): Buffer {
  const edns = opts.edns ?? (opts.do ? 1232 : undefined);
  return dnsPacket.encode({
    type: 'query',
    id: 7,
    flags: 0,
    questions: [{ name, type: type as dnsPacket.RecordType, class: 'IN' }],
    additionals:
      edns !== undefined
        ? [
            {
              type: 'OPT',
              name: '.',
              udpPayloadSize: edns,
              flags: opts.do ? dnsPacket.DNSSEC_OK : 0,
            } as dnsPacket.Answer,
          ]
        : [],
  });
}

function ask(r: Responder, msg: Buffer, transport: 'udp' | 'tcp' = 'udp') {
  const out = r.respond(msg, transport);
  const raw = Buffer.from(out.response!.subarray(0, out.length));
  return { raw, packet: dnsPacket.decode(raw) };
}

const rcodeOf = (p: dnsPacket.Packet) => (p as { rcode?: string }).rcode;
const types = (rrs: dnsPacket.Answer[] | undefined) => (rrs ?? []).map((a) => a.type);

const CORPUS: [string, string][] = [
  ['a.xcc.test', 'A'],
  ['a.xcc.test', 'AAAA'],
  ['a.xcc.test', 'TXT'],
  ['www.xcc.test', 'A'],
  ['chain.xcc.test', 'AAAA'],
  ['dangling.xcc.test', 'A'],
  ['nothing.xcc.test', 'A'],
  ['x.y.z.xcc.test', 'A'],
  ['q.gateway.cluster-a.dev-team.clusters.xcc.test', 'A'],
  ['q.r.gateway.cluster-a.dev-team.clusters.xcc.test', 'TXT'],
  ['_http._tcp.svc.xcc.test', 'SRV'],
  ['xcc.test', 'SOA'],
  ['xcc.test', 'NS'],
  ['big.xcc.test', 'A'],
  ['any.wild.xcc.test', 'A'],
];

describe('a signed zone', () => {
  it('answers queries without DO byte for byte as the same zone unsigned', () => {
    const plain = responder();
    const signed = responder(signing());
    for (const [name, type] of CORPUS)
      for (const opts of [{}, { edns: 1232 }, { edns: 512 }]) {
        const msg = query(name, type, opts);
        expect([name, type, ask(signed, msg).raw.toString('hex')]).toEqual([
          name,
          type,
          ask(plain, msg).raw.toString('hex'),
        ]);
        expect(ask(signed, msg, 'tcp').raw.equals(ask(plain, msg, 'tcp').raw)).toBe(true);
      }
  });

  it('answers a query without EDNS after one with DO as unsigned (nothing carries over between queries)', () => {
    const plain = responder();
    const signed = responder(signing());
    for (const [name, type] of CORPUS) {
      ask(signed, query(name, type, { do: true }));
      const msg = query(name, type);
      expect([name, type, ask(signed, msg).raw.toString('hex')]).toEqual([
        name,
        type,
        ask(plain, msg).raw.toString('hex'),
      ]);
    }
  });

  it('answers DO queries with an RRSIG after each RRset, sets no AD and echoes DO', () => {
    const r = responder(signing());
    const { packet } = ask(r, query('a.xcc.test', 'A', { do: true }));
    expect(types(packet.answers)).toEqual(['A', 'A', 'RRSIG']);
    const sig = packet.answers![2] as dnsPacket.Answer & {
      data: {
        typeCovered: string;
        algorithm: number;
        labels: number;
        signersName: string;
        keyTag: number;
        expiration: number;
        inception: number;
      };
    };
    expect(sig.data).toMatchObject({
      typeCovered: 'A',
      algorithm: 13,
      labels: 3,
      signersName: 'xcc.test',
      keyTag: KEY.keyTag,
    });
    expect(sig.data.inception).toBe(NOW - 3600);
    expect(sig.data.expiration).toBeGreaterThan(NOW + 13 * 86400);
    expect(packet.flags! & 0x20).toBe(0); // AD is a validator's to set
    const opt = packet.additionals!.find((a) => a.type === 'OPT') as { flags?: number };
    expect(opt.flags! & dnsPacket.DNSSEC_OK).toBeTruthy();
  });

  it('proves NXDOMAIN with the SOA and two NSECs, each signed', () => {
    const { packet } = ask(responder(signing()), query('nothing.xcc.test', 'A', { do: true }));
    expect(rcodeOf(packet)).toBe('NXDOMAIN');
    expect(types(packet.authorities).sort()).toEqual(['NSEC', 'NSEC', 'RRSIG', 'RRSIG', 'RRSIG', 'SOA']);
  });

  it('proves NODATA with the NSEC at the name', () => {
    const { packet } = ask(responder(signing()), query('a.xcc.test', 'TXT', { do: true }));
    expect(rcodeOf(packet)).toBe('NOERROR');
    const nsec = packet.authorities!.find((a) => a.type === 'NSEC') as {
      name: string;
      data: { rrtypes: string[] };
    };
    expect(nsec.name).toBe('a.xcc.test');
    expect(nsec.data.rrtypes).toEqual(['A', 'AAAA', 'RRSIG', 'NSEC']);
  });

  it('answers DNSKEY at the apex, and NODATA at any other name', () => {
    const r = responder(signing());
    const apex = ask(r, query('xcc.test', 'DNSKEY', { do: true })).packet;
    expect(types(apex.answers)).toEqual(['DNSKEY', 'RRSIG']);
    const other = ask(r, query('a.xcc.test', 'DNSKEY', { do: true })).packet;
    expect(rcodeOf(other)).toBe('NOERROR');
    expect(types(other.answers)).toEqual([]);
    expect(types(other.authorities)).toContain('NSEC');
  });

  it('signs a wildcard answer for the wildcard and proves that no closer name exists', () => {
    const { packet } = ask(
      responder(signing()),
      query('q.r.gateway.cluster-a.dev-team.clusters.xcc.test', 'A', { do: true }),
    );
    expect(types(packet.answers)).toEqual(['A', 'A', 'RRSIG']);
    expect(packet.answers![0]!.name).toBe('q.r.gateway.cluster-a.dev-team.clusters.xcc.test');
    expect((packet.answers![2] as { data: { labels: number } }).data.labels).toBe(6);
    expect(types(packet.authorities)).toEqual(['NSEC', 'RRSIG']);
  });

  it('signs each weighted variant', () => {
    const r = responder(signing());
    const seen = new Map<string, string>();
    for (let i = 0; i < 200; i++) {
      const { packet } = ask(r, query('shop.xcc.test', 'A', { do: true }));
      expect(types(packet.answers)).toEqual(['A', 'RRSIG']);
      seen.set(String((packet.answers![0] as { data: string }).data), JSON.stringify(packet.answers![1]));
    }
    expect([...seen.keys()].sort()).toEqual(['10.1.0.1', '10.1.0.2']);
    expect(new Set(seen.values()).size).toBe(2);
  });

  it('sets TC for a DO answer larger than the EDNS buffer, and answers it whole over TCP', () => {
    const r = responder(signing());
    const udp = ask(r, query('big.xcc.test', 'A', { do: true, edns: 512 })).packet;
    expect(udp.flags! & dnsPacket.TRUNCATED_RESPONSE).toBeTruthy();
    expect(udp.answers).toEqual([]);
    const tcp = ask(r, query('big.xcc.test', 'A', { do: true, edns: 512 }), 'tcp').packet;
    expect(types(tcp.answers)).toEqual([...Array(40).fill('A'), 'RRSIG']);
    // The NXDOMAIN's NSECs are appended per query: they count towards the limit too.
    const nx = ask(r, query('nothing.xcc.test', 'A', { do: true, edns: 512 })).raw;
    expect(nx.length).toBeLessThanOrEqual(512);
  });

  it('signs again only what changed: a second build of the same zone makes no signature', () => {
    const cache = new SignatureCache();
    responder(signing(cache));
    expect(cache.made).toBeGreaterThan(20);
    responder(signing(cache));
    expect(cache.made).toBe(0);
    // A failover to a variant already signed signs nothing new.
    const r = responder(signing(cache), new Set([probeTargetId('10.1.0.1', HTTP_CHECK)]));
    expect(cache.made).toBe(0);
    expect(types(ask(r, query('shop.xcc.test', 'A', { do: true })).packet.answers)).toEqual(['A', 'RRSIG']);
    // A new name: its RRset and NSEC, and the NSEC before it (its next name changed).
    responder(signing(cache), undefined, [{ name: 'new.xcc.test', type: 'A', values: ['10.9.9.9'] }]);
    expect(cache.made).toBe(3);
  });

  it('proves a name that does not exist with the NSEC that covers it, under every name of the zone', () => {
    // The reference: the chain's own binary search over whole names (SignedZone), made at build time.
    const chain = new SignedZone(zones()[0]!, KEY, new SignatureCache(), NOW).chain;
    const names = [...zones()[0]!.nodes.keys()];
    const r = responder(signing());
    // Labels around every child's (one octet more or less, and the ordering edges: "!" and "+"
    // either side of "*", digits, "-", "~", upper case, which the query may use).
    let asked = 0;
    for (const encloser of names) {
      const children = names.filter(
        (n) => n.endsWith(`.${encloser}`) && !n.slice(0, -encloser.length - 1).includes('.'),
      );
      const own = children.map((c) => c.slice(0, c.indexOf('.')));
      const labels = [
        '!',
        '+',
        '*a',
        '0',
        '-',
        'a',
        'aa',
        'm',
        'zz',
        '~',
        'Q',
        ...own.flatMap((l) => [`${l}x`, l.slice(0, -1), `${l}-`]),
      ];
      for (const label of labels) {
        const name = `${label}.${encloser}`;
        if (label === '' || names.includes(name.toLowerCase()) || label === '*') continue;
        const { packet } = ask(r, query(name, 'A', { do: true }));
        const nsecs = (packet.authorities ?? []).filter((a) => a.type === 'NSEC').map((a) => a.name);
        expect({ name, nsecs }).toEqual({
          name,
          nsecs: expect.arrayContaining([chain.names[chain.covering(name.toLowerCase())]]),
        });
        asked++;
      }
    }
    expect(asked).toBeGreaterThan(200);
  });

  it('answers a batch decided whole before any of it is written as it answers each query alone', () => {
    // The batched UDP path's passes (server.ts): every Decision of a batch is made and settled first,
    // so nothing of one query's may be left in the responder for the next one's write to read.
    const r = responder(signing());
    const batch = CORPUS.flatMap(([name, type]) =>
      [{}, { do: true }, { edns: 512 }, { do: true, edns: 512 }].map((opts) => query(name, type, opts)),
    );
    batch.push(Buffer.from('not a query'), query('xcc.test', 'AXFR'), query('other.test', 'A', { do: true }));
    const alone = batch.map((msg) => {
      const out = r.respond(msg, 'udp');
      return out.response && Buffer.from(out.response.subarray(0, out.length)).toString('hex');
    });
    const decisions = batch.map(() => new Decision());
    const failed: unknown[] = [];
    r.decideBatch(batch, batch.length, 'udp', decisions, failed);
    expect(failed.filter((f) => f !== undefined)).toEqual([]);
    const into = Buffer.alloc(1232);
    const written = batch.map((msg, i) => {
      const out = r.write(msg, decisions[i]!, into);
      return out.response && Buffer.from(out.response.subarray(0, out.length)).toString('hex');
    });
    expect(written).toEqual(alone);
    expect(written.filter((w) => w === undefined)).toHaveLength(1);
  });

  it('leaves a batch answered when one of its queries throws, whichever step throws', () => {
    // A bug met by one query must cost that query's answer alone (server.ts answers it with
    // nothing, counts a SERVFAIL and logs); the queries after it in every pass still go on.
    const batch = CORPUS.slice(0, 6).map(([name, type]) => query(name, type, { do: true }));
    for (const step of ['decide', 'locate', 'settle'] as const) {
      const poisoned = 2;
      const r = responder(signing());
      // Each responder signs anew (ECDSA signatures differ): compared with its own answers alone.
      const expected = batch.map((msg) => hex(r.respond(msg, 'udp')));
      const decisions = batch.map(() => new Decision());
      const original = r[step].bind(r) as (...args: unknown[]) => unknown;
      // The step throws for one message only; the rest of the batch takes the real one.
      const fault = new Error(`${step} failed`);
      (r as unknown as Record<string, unknown>)[step] = (...args: unknown[]) => {
        const d = step === 'decide' ? args[2] : args[0];
        if (d === decisions[poisoned]) throw fault;
        return original(...args);
      };
      const failed: unknown[] = new Array(batch.length).fill('stale');
      r.decideBatch(batch, batch.length, 'udp', decisions, failed);
      expect(failed.map((f, i) => (i === poisoned ? f : f === undefined))).toEqual(
        batch.map((_, i) => (i === poisoned ? fault : true)),
      );
      // Settled in the batch's passes, not left for write to do one at a time.
      expect(decisions.filter((d, i) => i !== poisoned && !d.settled)).toEqual([]);
      const into = Buffer.alloc(1232);
      batch.forEach((msg, i) => {
        if (i !== poisoned) expect(hex(r.write(msg, decisions[i]!, into))).toBe(expected[i]);
      });
    }
  });
});
