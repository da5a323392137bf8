// RRSIGs over canonical RRsets (RFC 4034 sections 3 and 6, RFC 4035 section
// 5.3.2), made when a zone is compiled and kept between builds: a signature is
// made again only for an RRset whose content changed, or when it has less than
// the refresh period left (Knot's rrsig-refresh). Expirations are jittered so
// that the signatures of a zone do not all come due at once.
import type { RData } from '../zone/rr.js';
import type { ZoneKey } from './key.js';
import { labelCount, nameWire, rdataWire, recordWire } from './wire.js';

export interface Validity {
  /** How long a new signature is valid (Knot's rrsig-lifetime, 14 days). */
  lifetimeSeconds: number;
  /** A signature with less than this left is made again (Knot's rrsig-refresh, 7 days). */
  refreshSeconds: number;
  /** Up to this much is taken off each new signature's lifetime, at random. */
  jitterSeconds: number;
}

export const DEFAULT_VALIDITY: Validity = {
  lifetimeSeconds: 14 * 86400,
  refreshSeconds: 7 * 86400,
  jitterSeconds: 86400,
};

/** Inception this far in the past, for validators whose clocks run behind (as Knot and BIND do). */
const INCEPTION_SKEW = 3600;

interface Kept {
  rdata: Buffer;
  expiration: number;
  /** The build that last used it. */
  build: number;
}

/**
 * A signature no build used is forgotten after this many builds: a failover and its return, or
 * a weighted variant that comes and goes, reuse their signatures rather than sign again.
 */
const KEEP_UNUSED_BUILDS = 8;

/**
 * Signatures by what they sign (see `contentKey`), kept by the build thread between builds. The key
 * is made from the records as the zone holds them, not from their canonical wire form: a build
 * looks up every RRset of the zone, most of them more than once, and making the canonical form for
 * each lookup was a third of a signed build that changed one record (ADR 0106, amended). The
 * canonical form is made only to sign.
 */
export class SignatureCache {
  private readonly kept = new Map<string, Kept>();
  private build = 0;
  private readonly keyIds = new WeakMap<ZoneKey, number>();
  private readonly idByDnskey = new Map<string, number>();
  /** Of the last build: signatures made and reused, and the earliest expiration (Unix seconds). */
  made = 0;
  reused = 0;
  earliestExpiration = Infinity;
  /** Earliest expiration of the last build's signatures by signer (zone apex). */
  earliestBySigner = new Map<string, number>();

  constructor(
    readonly validity: Validity = DEFAULT_VALIDITY,
    private readonly random: () => number = Math.random,
  ) {}

  /** Starts a build: counts reset; signatures not used by the build are forgotten at `end`. */
  begin(): void {
    this.made = 0;
    this.reused = 0;
    this.earliestExpiration = Infinity;
    this.earliestBySigner = new Map();
    this.build++;
  }

  end(): void {
    for (const [key, kept] of this.kept)
      if (this.build - kept.build >= KEEP_UNUSED_BUILDS) this.kept.delete(key);
  }

  /**
   * The RRSIG RDATA over one RRset. `owner` is the RRset's owner in the zone ("*.<encloser>" for a
   * wildcard); `originalTtl` the TTL the zone gives it (a negative answer's SOA is served lower).
   */
  rrsig(
    key: ZoneKey,
    signer: string,
    owner: string,
    type: number,
    originalTtl: number,
    data: readonly RData[],
    now: number,
  ): Buffer {
    const cacheKey = contentKey(this.keyId(key), signer, owner, type, originalTtl, data);
    const known = this.kept.get(cacheKey);
    if (known && known.expiration - now > this.validity.refreshSeconds) {
      this.use(cacheKey, known, signer);
      this.reused++;
      return known.rdata;
    }
    // RFC 4034 section 6.3: the RRs sorted by their canonical RDATA, duplicates removed.
    const sorted = data
      .map(rdataWire)
      .sort(Buffer.compare)
      .filter((r, i, a) => i === 0 || !r.equals(a[i - 1]!));
    const records = Buffer.concat(sorted.map((r) => recordWire(owner, type, originalTtl, r)));
    const expiration =
      now + this.validity.lifetimeSeconds - Math.floor(this.random() * this.validity.jitterSeconds);
    const head = Buffer.alloc(18);
    head.writeUInt16BE(type, 0);
    head[2] = key.algorithm;
    head[3] = labelCount(owner);
    head.writeUInt32BE(originalTtl >>> 0, 4);
    head.writeUInt32BE(expiration >>> 0, 8);
    head.writeUInt32BE((now - INCEPTION_SKEW) >>> 0, 12);
    head.writeUInt16BE(key.keyTag, 16);
    const unsigned = Buffer.concat([head, nameWire(signer)]);
    // RFC 4034 section 3.1.8.1: the signature covers the RDATA before it, then the RRset.
    const signature = key.sign(Buffer.concat([unsigned, records]));
    const made = { rdata: Buffer.concat([unsigned, signature]), expiration, build: this.build };
    this.use(cacheKey, made, signer);
    this.made++;
    return made.rdata;
  }

  /**
   * A number per public key seen: a key is parsed again for every build (a new object), and two
   * keys can share a key tag (RFC 4034 appendix B), so the tag alone would let a rollover to a
   * colliding key serve the old key's signatures.
   */
  private keyId(key: ZoneKey): number {
    let id = this.keyIds.get(key);
    if (id === undefined) {
      const dnskey = key.dnskey.toString('base64');
      id = this.idByDnskey.get(dnskey);
      if (id === undefined) this.idByDnskey.set(dnskey, (id = this.idByDnskey.size));
      this.keyIds.set(key, id);
    }
    return id;
  }

  private use(cacheKey: string, kept: Kept, signer: string): void {
    kept.build = this.build;
    this.kept.set(cacheKey, kept);
    if (kept.expiration < this.earliestExpiration) this.earliestExpiration = kept.expiration;
    if (kept.expiration < (this.earliestBySigner.get(signer) ?? Infinity))
      this.earliestBySigner.set(signer, kept.expiration);
  }
}

/**
 * What a signature covers, as a string that two RRsets share exactly when their canonical forms
 * are the same (RFC 4034 section 6.3: the set of RDATA, not its order or its duplicates) and that
 * costs no buffer to make. Each field is length-prefixed, so no content can pass for another's.
 * Names are as the zone holds them (lower case, RFC 4034 section 6.2 already applied).
 */
export function contentKey(
  keyId: number,
  signer: string,
  owner: string,
  type: number,
  originalTtl: number,
  data: readonly RData[],
): string {
  const head = `${keyId}/${signer.length}:${signer}/${owner.length}:${owner}/${type}/${originalTtl}`;
  if (data.length === 1) return `${head}/${rdataKey(data[0]!)}`;
  const rdatas = data.map(rdataKey).sort();
  let out = head;
  for (let i = 0; i < rdatas.length; i++) if (i === 0 || rdatas[i] !== rdatas[i - 1]) out += `/${rdatas[i]}`;
  return out;
}

function rdataKey(data: RData): string {
  switch (data.kind) {
    case 'bytes':
      return `b${data.bytes.length}:${octets(data.bytes)}`;
    case 'name':
      return `n${data.target.length}:${data.target}`;
    case 'srv':
      return `s${data.priority},${data.weight},${data.port},${data.target.length}:${data.target}`;
    case 'soa':
      return `o${data.mname.length}:${data.mname},${data.rname.length}:${data.rname},${data.serial},${data.refresh},${data.retry},${data.expire},${data.minimum}`;
  }
}

/** The octets as a string of the same length (one character each). */
function octets(bytes: Uint8Array): string {
  // Short ones (addresses) in JS: a call into Buffer's latin1 decoder costs more than the loop.
  if (bytes.length > 32) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1');
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += String.fromCharCode(bytes[i]!);
  return out;
}
