// A zone's names, found over the query's wire bytes: made where the answers
// are encoded (the build worker), so that a query makes no string and probes
// no Map. With the system calls batched, the Map of name strings was a quarter
// of the answering process at 100,000 names (docs/adr/0105): V8's hash map
// chases a pointer per entry and a string per key, where this table reads one
// 16-octet bucket and the key's octets.
//
// Keys are the names in wire form (length octet, label, ..., 0), lower case.
// The hash runs over the octets from the end, so one pass over a query name
// yields the hash of each of its suffixes: the walk up to the closest
// encloser (RFC 4592 section 3.3.1) costs a probe per label, no hashing again.
import { randomInt } from 'node:crypto';
import { wireLength } from '../zone/name.js';

export interface NameTableData {
  /** Every name's lowercase wire form, back to back. */
  keys: Uint8Array;
  /**
   * Open addressing, linear probing, at most half full: 4 words a bucket, the name's hash, its
   * index + 1 (0: empty), its key's offset in `keys` and its length.
   */
  buckets: Uint32Array;
  /** Per name index: the index + 1 of its wildcard child "*.<name>", 0 if it has none. */
  wildcardOf: Uint32Array;
  /** Chosen at random per build, so that no one can aim queries at one long probe sequence. */
  seed: number;
}

/** Labels of a query name at most, and one more for the root (query.ts takes up to 256 octets). */
const MAX_LABELS = 128;

/**
 * The zone's names in order (their index is their place in `names`), as a table. Made in the
 * build worker under its heap cap (--build-heap-limit): no object per name.
 */
export function buildNameTable(names: readonly string[]): NameTableData {
  const seed = randomInt(0, 2 ** 32) >>> 0;
  let total = 0;
  for (const n of names) total += wireLength(n);
  const keys = new Uint8Array(total);
  const size = Math.max(8, 2 ** Math.ceil(Math.log2(names.length * 2 + 1)));
  const buckets = new Uint32Array(size * 4);
  const mask = size - 1;
  let at = 0;
  for (let i = 0; i < names.length; i++) {
    const length = writeWire(names[i]!, keys, at);
    const h = finish(hashBackwards(keys, at, at + length, seed));
    let b = h & mask;
    while (buckets[b * 4 + 1] !== 0) b = (b + 1) & mask;
    buckets[b * 4] = h;
    buckets[b * 4 + 1] = i + 1;
    buckets[b * 4 + 2] = at;
    buckets[b * 4 + 3] = length;
    at += length;
  }
  const data = { keys, buckets, wildcardOf: new Uint32Array(names.length), seed };
  // Each wildcard's encloser (its key without the first label, "\x01*"), found in the table itself.
  const table = new NameTable(data);
  for (let b = 0; b < size; b++) {
    const index = buckets[b * 4 + 1]!;
    const key = buckets[b * 4 + 2]!;
    const length = buckets[b * 4 + 3]!;
    if (index === 0 || keys[key] !== 1 || keys[key + 1] !== STAR) continue;
    const encloserHash = finish(hashBackwards(keys, key + 2, key + length, seed));
    // The encloser of a wildcard exists: every name between a record and the apex does.
    const encloser = table.find(encloserHash, keys, key + 2, length - 2);
    if (encloser >= 0) data.wildcardOf[encloser] = index;
  }
  return data;
}

const STAR = 0x2a;

/** existingOrEncloser's answer for a name that does not exist, less its closest encloser's index. */
export const NOT_FOUND = -1;

/** Writes "a.b" as 1 a 1 b 0 (latin1: the zone's names are ASCII, lower case); returns its octets. */
function writeWire(name: string, out: Uint8Array, at: number): number {
  let lengthAt = at;
  let p = at + 1;
  if (name !== '') {
    for (let i = 0; i < name.length; i++) {
      const c = name.charCodeAt(i);
      if (c === DOT) {
        out[lengthAt] = p - lengthAt - 1;
        lengthAt = p++;
      } else out[p++] = c;
    }
    out[lengthAt] = p - lengthAt - 1;
    lengthAt = p++;
  }
  out[lengthAt] = 0;
  return p - at;
}
const DOT = 0x2e;

/** A name in wire form, lower case as given (the responder's copy of each apex). */
export function wireForm(name: string): Uint8Array {
  const out = new Uint8Array(wireLength(name));
  writeWire(name, out, 0);
  return out;
}

/** The hash of name[from, to), read from the end (FNV-1a's step). */
function hashBackwards(name: Uint8Array, from: number, to: number, seed: number): number {
  let h = seed ^ 0x811c9dc5;
  for (let i = to - 1; i >= from; i--) h = Math.imul(h ^ name[i]!, 0x01000193);
  return h;
}

/** MurmurHash3's finaliser: FNV's low bits, the bucket's, depend only on the octets' low bits. */
function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Reused by every lookup: the hash of each suffix of the query name, by its first label. */
const suffixHashes = new Int32Array(MAX_LABELS + 1);

export class NameTable {
  private readonly keys: Uint8Array;
  private readonly buckets: Uint32Array;
  private readonly wildcardOf: Uint32Array;
  private readonly seed: number;
  private readonly mask: number;

  constructor(data: NameTableData) {
    this.keys = data.keys;
    this.buckets = data.buckets;
    this.wildcardOf = data.wildcardOf;
    this.seed = data.seed;
    this.mask = data.buckets.length / 4 - 1;
  }

  /**
   * What answers the query name (zone/wildcard.ts's closestMatch, on the wire): the index of the
   * name itself; else of the wildcard child of the closest encloser, the nearest existing
   * ancestor (RFC 4592 section 3.3.1); else -1 (NXDOMAIN).
   *
   * @param name the query name's wire form in lower case, from offset 0
   * @param length its octets, the final 0 included
   * @param starts the offset of each label's length octet; starts[count] is the final 0's
   * @param apexLabels the zone's labels: the walk ends at the apex, which the name is at or below
   */
  closestMatch(
    name: Uint8Array,
    length: number,
    starts: Int32Array,
    count: number,
    apexLabels: number,
  ): number {
    const found = this.existingOrEncloser(name, length, starts, count, apexLabels);
    return found >= 0 ? found : this.wildcardOf[NOT_FOUND - found]! - 1;
  }

  /**
   * After existingOrEncloser found an encloser: the query's label at which it starts (the label
   * right below it is one less). A field, not a second return value, so the hot path makes no object.
   */
  encloserLabel = 0;

  /**
   * The index of the query name if it exists; else NOT_FOUND - the index of its closest encloser
   * (RFC 4592 section 3.3.1), its nearest existing ancestor, which the apex makes sure of. One pass
   * over the name, as closestMatch (the parameters are its).
   */
  existingOrEncloser(
    name: Uint8Array,
    length: number,
    starts: Int32Array,
    count: number,
    apexLabels: number,
  ): number {
    this.hashSuffixes(name, starts, count);
    const exact = this.find(finish(suffixHashes[0]!), name, 0, length);
    if (exact >= 0) return exact;
    for (let k = 1; k <= count - apexLabels; k++) {
      const from = starts[k]!;
      const encloser = this.find(finish(suffixHashes[k]!), name, from, length - from);
      if (encloser >= 0) {
        this.encloserLabel = k;
        return NOT_FOUND - encloser;
      }
    }
    return NOT_FOUND;
  }

  /** The index of the wildcard child "*.<name>" of name `index`, or -1. */
  wildcardChildOf(index: number): number {
    return this.wildcardOf[index]! - 1;
  }

  /** The index of the query name itself (wire form, lower case, `length` octets with the final 0), or -1. */
  indexOf(name: Uint8Array, length: number): number {
    return this.find(finish(hashBackwards(name, 0, length, this.seed)), name, 0, length);
  }

  /**
   * The value in `cuts` (name index → referral) of the query name or its nearest ancestor below
   * the apex that is a zone cut, or -1. Asked only in zones with cuts.
   */
  cutAtOrAbove(
    name: Uint8Array,
    length: number,
    starts: Int32Array,
    count: number,
    apexLabels: number,
    cuts: ReadonlyMap<number, number>,
  ): number {
    this.hashSuffixes(name, starts, count);
    for (let k = 0; k < count - apexLabels; k++) {
      const from = starts[k]!;
      const index = this.find(finish(suffixHashes[k]!), name, from, length - from);
      const referral = index < 0 ? undefined : cuts.get(index);
      if (referral !== undefined) return referral;
    }
    return -1;
  }

  /** suffixHashes[k]: the (unfinished) hash of the name from its label k. */
  private hashSuffixes(name: Uint8Array, starts: Int32Array, count: number): void {
    let h = this.seed ^ 0x811c9dc5;
    h = Math.imul(h, 0x01000193); // the final 0
    suffixHashes[count] = h;
    for (let k = count - 1; k >= 0; k--) {
      for (let i = starts[k + 1]! - 1; i >= starts[k]!; i--) h = Math.imul(h ^ name[i]!, 0x01000193);
      suffixHashes[k] = h;
    }
  }

  /** The index of the name at name[from, from + length), or -1. `h`: its hash, finished. */
  find(h: number, name: Uint8Array, from: number, length: number): number {
    const buckets = this.buckets;
    const keys = this.keys;
    for (let b = h & this.mask; ; b = (b + 1) & this.mask) {
      const at = b * 4;
      const index = buckets[at + 1]!;
      if (index === 0) return -1;
      if (buckets[at] !== h || buckets[at + 3] !== length) continue;
      const key = buckets[at + 2]!;
      let i = 0;
      while (i < length && keys[key + i] === name[from + i]) i++;
      if (i === length) return index - 1;
    }
  }
}
