import { createPrivateKey, createPublicKey, verify } from 'node:crypto';
import type { RData } from '../zone/rr.js';
import { generateKeyPem, parseKey } from './key.js';
import { contentKey, SignatureCache } from './rrsig.js';
import { nameWire, rdataWire, recordWire } from './wire.js';

const PEM = generateKeyPem();
const KEY = parseKey(PEM);
const NOW = 1_800_000_000;
const A = 1;
const SRV = 33;
const bytes = (...octets: number[]): RData => ({ kind: 'bytes', bytes: Uint8Array.from(octets) });
const addresses = [bytes(10, 0, 0, 2), bytes(10, 0, 0, 1)];

/** RFC 4034 section 3.1.8.1 and RFC 6605 section 4: the signature over its RDATA head and the canonical RRset. */
function verifies(rrsig: Buffer, owner: string, type: number, ttl: number, data: RData[]): boolean {
  const head = rrsig.subarray(0, 18 + nameWire('xcc.test').length);
  const sorted = data.map(rdataWire).sort(Buffer.compare);
  const records = Buffer.concat(sorted.map((r) => recordWire(owner, type, ttl, r)));
  const key = createPublicKey(createPrivateKey(PEM));
  return verify(
    'sha256',
    Buffer.concat([head, records]),
    { key, dsaEncoding: 'ieee-p1363' },
    rrsig.subarray(head.length),
  );
}

describe('the signature cache', () => {
  it('signs the canonical RRset, whatever the order of the records given', () => {
    const cache = new SignatureCache();
    cache.begin();
    const rrsig = cache.rrsig(KEY, 'xcc.test', 'h.xcc.test', A, 30, addresses, NOW);
    expect(verifies(rrsig, 'h.xcc.test', A, 30, addresses)).toBe(true);
    expect(cache.made).toBe(1);
  });

  it('reuses a signature for the same RRset in another build, in another order, with duplicates', () => {
    const cache = new SignatureCache();
    cache.begin();
    const first = cache.rrsig(KEY, 'xcc.test', 'h.xcc.test', A, 30, addresses, NOW);
    cache.end();
    cache.begin();
    // New objects with the same content, as a build that parsed the set again makes them.
    const again = [bytes(10, 0, 0, 1), bytes(10, 0, 0, 2), bytes(10, 0, 0, 1)];
    expect(cache.rrsig(KEY, 'xcc.test', 'h.xcc.test', A, 30, again, NOW + 60)).toBe(first);
    expect(cache.made).toBe(0);
    expect(cache.reused).toBe(1);
    // The same key parsed again, as every build parses it.
    expect(cache.rrsig(parseKey(PEM), 'xcc.test', 'h.xcc.test', A, 30, addresses, NOW + 60)).toBe(first);
  });

  it('signs again what differs in owner, type, TTL, data, signer or key, and what comes due', () => {
    const cache = new SignatureCache();
    cache.begin();
    const base = cache.rrsig(KEY, 'xcc.test', 'h.xcc.test', A, 30, addresses, NOW);
    const other = [
      cache.rrsig(KEY, 'xcc.test', 'g.xcc.test', A, 30, addresses, NOW),
      cache.rrsig(KEY, 'xcc.test', 'h.xcc.test', A, 60, addresses, NOW),
      cache.rrsig(KEY, 'xcc.test', 'h.xcc.test', A, 30, addresses.slice(1), NOW),
      cache.rrsig(KEY, 'other.test', 'h.xcc.test', A, 30, addresses, NOW),
      cache.rrsig(parseKey(generateKeyPem()), 'xcc.test', 'h.xcc.test', A, 30, addresses, NOW),
      // Another key with the same tag and algorithm (RFC 4034 appendix B: tags collide).
      cache.rrsig(
        { ...parseKey(generateKeyPem()), keyTag: KEY.keyTag },
        'xcc.test',
        'h.xcc.test',
        A,
        30,
        addresses,
        NOW,
      ),
    ];
    for (const o of other) expect(o).not.toBe(base);
    expect(cache.made).toBe(7);
    const due = NOW + cache.validity.lifetimeSeconds - cache.validity.refreshSeconds;
    expect(cache.rrsig(KEY, 'xcc.test', 'h.xcc.test', A, 30, addresses, due)).not.toBe(base);
  });

  it('keys content so that no field can pass for another', () => {
    const key = (owner: string, type: number, data: RData[]) =>
      contentKey(0, 'xcc.test', owner, type, 30, data);
    // The same text as octets and as a name; a name that holds the separators the key uses.
    expect(key('a.xcc.test', 16, [bytes(0x61)])).not.toBe(
      key('a.xcc.test', 16, [{ kind: 'name', target: 'a' }]),
    );
    expect(key('a/1.xcc.test', A, [bytes(1)])).not.toBe(key('a', A, [bytes(1)]));
    const srv = (priority: number, weight: number, port: number, target: string): RData => ({
      kind: 'srv',
      priority,
      weight,
      port,
      target,
    });
    expect(key('_s._tcp.xcc.test', SRV, [srv(1, 2, 3, 'a')])).not.toBe(
      key('_s._tcp.xcc.test', SRV, [srv(1, 23, 3, 'a')]),
    );
    // One record of two octets, or two of one each.
    expect(key('b.xcc.test', 16, [bytes(1, 2)])).not.toBe(key('b.xcc.test', 16, [bytes(1), bytes(2)]));
    // Long data (TXT) the same way as short.
    const long = Array.from({ length: 100 }, (_, i) => i);
    expect(key('t.xcc.test', 16, [bytes(...long)])).toBe(key('t.xcc.test', 16, [bytes(...long)]));
    expect(key('t.xcc.test', 16, [bytes(...long)])).not.toBe(key('t.xcc.test', 16, [bytes(...long, 0)]));
  });
});
