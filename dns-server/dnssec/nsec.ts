// The NSEC chain of one zone view (RFC 4034 section 4, RFC 4035 section
// 2.3): every name that holds data, in canonical order, each pointing to the
// next, the last to the apex. Empty non-terminals hold no NSEC: the NSEC of
// the name before them covers them (RFC 4035 section 3.1.3.2).
import type { Zone } from '../zone/zone.js';
import { canonicalLabels, compareCanonical, nameWire, DNSSEC_T } from './wire.js';

export class NsecChain {
  /** Names with data, in canonical order; [0] is the apex. */
  readonly names: string[];
  /** canonicalLabels of each name, index for index. */
  readonly keys: Uint8Array[];
  private readonly ranks = new Map<string, number>();

  constructor(zone: Zone) {
    const named = [...zone.nodes.values()]
      .filter((n) => n.rrsets.size > 0)
      .map((n) => ({ name: n.name, key: canonicalLabels(n.name) }));
    named.sort((a, b) => compareCanonical(a.key, b.key));
    this.names = named.map((n) => n.name);
    this.keys = named.map((n) => n.key);
    this.names.forEach((n, i) => this.ranks.set(n, i));
  }

  /** The rank of the NSEC at `name`, if it has one. */
  rankOf(name: string): number | undefined {
    return this.ranks.get(name);
  }

  /** The rank of the NSEC owned by `name` or, if it has none, of the one that covers it. */
  covering(name: string): number {
    const key = canonicalLabels(name);
    // The largest rank whose name is at most `name` (the apex, rank 0, is at most every name of the zone).
    let lo = 0;
    let hi = this.keys.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (compareCanonical(this.keys[mid]!, key) <= 0) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  next(rank: number): string {
    return this.names[(rank + 1) % this.names.length]!;
  }
}

/** NSEC RDATA: the next owner (uncompressed, RFC 4034 section 4.1.1) and the type bit maps. */
export function nsecRdata(next: string, types: Iterable<number>): Buffer {
  return Buffer.concat([nameWire(next), typeBitmaps(types)]);
}

/**
 * Type bit maps by the types as a node lists them: a zone has few combinations, and every build
 * makes an NSEC for each name (20,000 names: 20,000 bit maps, a few distinct ones).
 */
const bitmapsByTypes = new Map<string, Buffer>();
const MAX_BITMAPS_KEPT = 1024;

/** RFC 4034 section 4.1.2: per window of 256 types, the window, the octets used, the bits. */
export function typeBitmaps(types: Iterable<number>): Buffer {
  const list = [...types];
  const key = list.join(',');
  let bitmaps = bitmapsByTypes.get(key);
  if (!bitmaps) {
    bitmaps = bitmapsOf(list);
    if (bitmapsByTypes.size >= MAX_BITMAPS_KEPT) bitmapsByTypes.clear();
    bitmapsByTypes.set(key, bitmaps);
  }
  return bitmaps;
}

function bitmapsOf(types: readonly number[]): Buffer {
  const windows = new Map<number, Uint8Array>();
  for (const t of new Set([...types, DNSSEC_T.RRSIG, DNSSEC_T.NSEC])) {
    const w = t >> 8;
    let bits = windows.get(w);
    if (!bits) windows.set(w, (bits = new Uint8Array(32)));
    bits[(t & 0xff) >> 3]! |= 0x80 >> (t & 7);
  }
  const parts: Buffer[] = [];
  for (const w of [...windows.keys()].sort((a, b) => a - b)) {
    const bits = windows.get(w)!;
    let used = 32;
    while (used > 0 && bits[used - 1] === 0) used--;
    parts.push(Buffer.from([w, used]), Buffer.from(bits.subarray(0, used)));
  }
  return Buffer.concat(parts);
}
