// RRSIGs over canonical RRsets (RFC 4034 sections 3 and 6, RFC 4035 section
// 5.3.2), made when a zone is compiled and kept between builds: a signature is
// made again only for an RRset whose canonical bytes changed, or when it has
// less than the refresh period left (Knot's rrsig-refresh). Expirations are
// jittered so that the signatures of a zone do not all come due at once.
import type { ZoneKey } from './key.js';
import { labelCount, nameWire, recordWire } from './wire.js';

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

/** Signatures by the canonical bytes of what they sign, kept by the build thread between builds. */
export class SignatureCache {
  private readonly kept = new Map<string, Kept>();
  private build = 0;
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
    rdatas: readonly Buffer[],
    now: number,
  ): Buffer {
    // RFC 4034 section 6.3: the RRs sorted by their canonical RDATA, duplicates removed.
    const sorted = [...rdatas].sort(Buffer.compare).filter((r, i, a) => i === 0 || !r.equals(a[i - 1]!));
    const records = Buffer.concat(sorted.map((r) => recordWire(owner, type, originalTtl, r)));
    const cacheKey = `${key.keyTag}/${key.algorithm}/${signer}/${records.toString('latin1')}`;
    const known = this.kept.get(cacheKey);
    if (known && known.expiration - now > this.validity.refreshSeconds) {
      this.use(cacheKey, known, signer);
      this.reused++;
      return known.rdata;
    }
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

  private use(cacheKey: string, kept: Kept, signer: string): void {
    kept.build = this.build;
    this.kept.set(cacheKey, kept);
    if (kept.expiration < this.earliestExpiration) this.earliestExpiration = kept.expiration;
    if (kept.expiration < (this.earliestBySigner.get(signer) ?? Infinity))
      this.earliestBySigner.set(signer, kept.expiration);
  }
}
