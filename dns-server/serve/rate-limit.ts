// Response rate limiting for UDP, as BIND's RRL and NSD's rrl-* options: an
// exposed authoritative server must not be a reflector. Responses are counted
// per client prefix (/24 IPv4, /56 IPv6: one site, whose addresses a spoofer
// can pick among) and per response: the query name and type for answers, the
// zone for NXDOMAIN (so a random-subdomain flood is one bucket), one bucket
// for errors. Past the rate, a response is dropped, and every `slip`-th one is
// sent truncated instead (TC, no records): a real client behind the prefix
// retries over TCP, which is never limited, so it is still answered, while a
// spoofed victim gets no amplification. Memory is a fixed table of buckets
// made at start, whatever the flood: a key that finds its places taken takes
// the stalest. Pure: no sockets; the clock is passed in.

export interface RateLimitOptions {
  /** Responses per second per client prefix and response; 0 turns rate limiting off. */
  responsesPerSecond: number;
  /** Every slip-th limited response is sent truncated (TC) rather than dropped; 0: all dropped (BIND and NSD: 2). */
  slip: number;
  ipv4PrefixLength: number;
  ipv6PrefixLength: number;
  /** Buckets in the table (a power of two): its memory is ~17 octets each, fixed at start. */
  tableSize: number;
}

export const DEFAULT_RATE_LIMIT: RateLimitOptions = {
  responsesPerSecond: 0,
  slip: 2,
  ipv4PrefixLength: 24,
  ipv6PrefixLength: 56,
  tableSize: 1 << 16,
};

/** What becomes of one response. */
export const SEND = 0;
export const DROP = 1;
export const SLIP = 2;
export type Verdict = typeof SEND | typeof DROP | typeof SLIP;

const NOERROR = 0;
const NXDOMAIN = 3;
/** A bucket unused this long (ms) is free for another key whatever its credit. */
const STALE_MS = 2_000;

export class ResponseRateLimiter {
  /** Key hash per bucket (0: empty). */
  private readonly keys: Uint32Array;
  /** Credit per bucket: responses it may still send (refilled at the rate, at most one second's worth). */
  private readonly credit: Float32Array;
  /** When each bucket was last refilled (ms, the caller's clock). */
  private readonly seen: Float64Array;
  /** Limited responses per bucket, for slip. */
  private readonly limited: Uint8Array;
  private readonly mask: number;
  private readonly v4Mask: number;
  /** Counters for metrics. */
  readonly stats = { dropped: 0, slipped: 0, evicted: 0 };

  constructor(readonly opts: RateLimitOptions) {
    const size = opts.tableSize;
    if (!Number.isInteger(size) || size < 2 || (size & (size - 1)) !== 0)
      throw new Error(`rate limit table size ${size}: not a power of two of at least 2`);
    this.keys = new Uint32Array(size);
    this.credit = new Float32Array(size);
    this.seen = new Float64Array(size);
    this.limited = new Uint8Array(size);
    this.mask = size - 1;
    this.v4Mask = opts.ipv4PrefixLength === 0 ? 0 : (~0 << (32 - opts.ipv4PrefixLength)) >>> 0;
  }

  get enabled(): boolean {
    return this.opts.responsesPerSecond > 0;
  }

  /** Octets of the table: fixed at construction. */
  get tableBytes(): number {
    return this.keys.byteLength + this.credit.byteLength + this.seen.byteLength + this.limited.byteLength;
  }

  /**
   * The verdict on a UDP response to `peer` (an IP literal as sockets give it) for the query `msg`.
   * @param rcode the response's code; zone: the served zone it falls in, if any
   */
  decide(peer: string, msg: Buffer, rcode: number, zone: string | undefined, nowMs: number): Verdict {
    const rate = this.opts.responsesPerSecond;
    if (rate <= 0) return SEND;
    let h = this.prefixHash(peer);
    if (rcode === NOERROR) h = hashQuestion(h, msg);
    else if (rcode === NXDOMAIN && zone !== undefined) h = hashString(h ^ 0x6e78, zone);
    else h = fnv(h, 0xee);
    h = h >>> 0 || 1;
    const i = this.bucketOf(h, nowMs);
    const elapsed = nowMs - this.seen[i]!;
    this.seen[i] = nowMs;
    const credit = Math.min(rate, this.credit[i]! + (elapsed * rate) / 1000);
    if (credit >= 1) {
      this.credit[i] = credit - 1;
      return SEND;
    }
    this.credit[i] = credit;
    const slip = this.opts.slip;
    const n = (this.limited[i] = (this.limited[i]! + 1) & 0xff);
    if (slip > 0 && n % slip === 0) {
      this.stats.slipped++;
      return SLIP;
    }
    this.stats.dropped++;
    return DROP;
  }

  /** The key's bucket: its own, or of its two places the empty or stalest one, made fresh. */
  private bucketOf(h: number, nowMs: number): number {
    const a = h & this.mask;
    const b = (a ^ ((h >>> 16) | 1)) & this.mask;
    if (this.keys[a] === h) return a;
    if (this.keys[b] === h) return b;
    const i = this.seen[a]! <= this.seen[b]! ? a : b;
    if (this.keys[i] !== 0 && nowMs - this.seen[i]! < STALE_MS) this.stats.evicted++;
    this.keys[i] = h;
    this.credit[i] = this.opts.responsesPerSecond;
    this.seen[i] = nowMs;
    this.limited[i] = 0;
    return i;
  }

  /** The hash of the client's prefix: IPv4 (and IPv4-mapped IPv6) by ipv4PrefixLength, IPv6 by ipv6PrefixLength. */
  private prefixHash(peer: string): number {
    const v4 = parseIPv4(peer, peer.startsWith('::ffff:') && peer.includes('.') ? 7 : 0);
    if (v4 !== undefined) return fnv(fnv(0x811c9dc5, 4), (v4 & this.v4Mask) >>> 0);
    const bits = parseIPv6Prefix(peer, this.opts.ipv6PrefixLength);
    let h = fnv(0x811c9dc5, 6);
    for (const w of bits) h = fnv(h, w);
    return h;
  }
}

/** FNV-1a over the 4 octets of a 32-bit word. */
function fnv(h: number, word: number): number {
  h = Math.imul(h ^ (word & 0xff), 0x01000193);
  h = Math.imul(h ^ ((word >>> 8) & 0xff), 0x01000193);
  h = Math.imul(h ^ ((word >>> 16) & 0xff), 0x01000193);
  return Math.imul(h ^ (word >>> 24), 0x01000193);
}

function hashString(h: number, s: string): number {
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h;
}

/** The question's name (case folded, RFC 4343) and type, from the query's octets. */
function hashQuestion(h: number, msg: Buffer): number {
  let p = 12;
  const end = Math.min(msg.length, 12 + 255);
  while (p < end) {
    const len = msg[p]!;
    h = Math.imul(h ^ len, 0x01000193);
    p++;
    if (len === 0 || len > 63) break;
    for (const stop = Math.min(p + len, end); p < stop; p++) {
      const c = msg[p]!;
      h = Math.imul(h ^ (c >= 0x41 && c <= 0x5a ? c | 0x20 : c), 0x01000193);
    }
  }
  if (p + 1 < msg.length) h = Math.imul(h ^ ((msg[p]! << 8) | msg[p + 1]!), 0x01000193);
  return h;
}

/** An IPv4 literal from `start` as a 32-bit number, or undefined when it is not one. */
export function parseIPv4(s: string, start = 0): number | undefined {
  let value = 0;
  let octet = -1;
  let dots = 0;
  for (let i = start; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x2e) {
      if (octet < 0 || dots === 3) return undefined;
      value = value * 256 + octet;
      octet = -1;
      dots++;
    } else if (c >= 0x30 && c <= 0x39) {
      octet = (octet < 0 ? 0 : octet * 10) + (c - 0x30);
      if (octet > 255) return undefined;
    } else return undefined;
  }
  if (dots !== 3 || octet < 0) return undefined;
  return value * 256 + octet;
}

/** The first `bits` bits of an IPv6 literal as 32-bit words (the rest zeroed); [] when it is not one. */
export function parseIPv6Prefix(s: string, bits: number): number[] {
  const zone = s.indexOf('%');
  const text = zone >= 0 ? s.slice(0, zone) : s;
  const halves = text.split('::');
  if (halves.length > 2) return [];
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  const fill = 8 - head.length - tail.length;
  if ((halves.length === 1 && fill !== 0) || fill < 0) return [];
  const words16 = [...head, ...Array<string>(halves.length === 2 ? fill : 0).fill('0'), ...tail].map((g) =>
    /^[0-9a-fA-F]{1,4}$/.test(g) ? parseInt(g, 16) : -1,
  );
  if (words16.some((w) => w < 0)) return [];
  const out: number[] = [];
  for (let i = 0; i < 4; i++) {
    const word = ((words16[2 * i]! << 16) | words16[2 * i + 1]!) >>> 0;
    const keep = Math.max(0, Math.min(32, bits - 32 * i));
    out.push(keep === 0 ? 0 : (word & ((~0 << (32 - keep)) >>> 0)) >>> 0);
  }
  return out;
}

/**
 * Turns a response written in `buf` (`length` octets, the question echoed from octet 12) into its
 * truncated form in place: TC set, no records, the question kept (RFC 2181 section 9: the client
 * retries over TCP). Returns the new length, or 0 when the question cannot be walked.
 */
export function truncateInPlace(buf: Buffer, length: number): number {
  let p = 12;
  if (buf.readUInt16BE(4) > 0) {
    while (p < length) {
      const len = buf[p]!;
      if (len === 0) break;
      if (len > 63) return 0;
      p += 1 + len;
    }
    p += 5; // the root label, QTYPE, QCLASS
    if (p > length) return 0;
  }
  buf[2] = buf[2]! | 0x02;
  buf.writeUInt32BE(0, 6); // ANCOUNT, NSCOUNT
  buf.writeUInt16BE(0, 10); // ARCOUNT
  return p;
}
