// TSIG (RFC 8945) with HMAC-SHA256: signing a message, and checking the TSIG
// record at the end of one. Pure (the clock is a parameter). Only hmac-sha256
// is offered: RFC 8945 section 6 makes it the one to implement, and every
// secondary here (NSD, Knot, BIND) speaks it.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { normalizeName } from '../zone/name.js';
import { nameWire } from './rr-wire.js';

export const TSIG_TYPE = 250;
const CLASS_ANY = 255;
export const HMAC_SHA256 = 'hmac-sha256';
/** RFC 8945 section 10: 300 s is the fudge recommended. */
export const FUDGE = 300;
const MAC_LENGTH = 32;

/** TSIG error codes (RFC 8945 section 3 and 5.2), carried in the TSIG record; the RCODE is NOTAUTH. */
export const TSIG_ERROR = { NOERROR: 0, BADSIG: 16, BADKEY: 17, BADTIME: 18 } as const;
export const NOTAUTH = 9;

export interface TsigKey {
  /** Normalised (lower case, no final dot). */
  name: string;
  algorithm: typeof HMAC_SHA256;
  secret: Buffer;
}

/** The TSIG record of a message, as read. */
export interface TsigRecord {
  keyName: string;
  algorithm: string;
  timeSigned: number;
  fudge: number;
  mac: Buffer;
  originalId: number;
  error: number;
  other: Buffer;
  /** Offset of the TSIG record in the message: what precedes it is what was signed. */
  start: number;
}

export type TsigCheck =
  | { ok: true; key: TsigKey; tsig: TsigRecord }
  /** No TSIG record at all. */
  | { ok: false; error: 'missing' }
  /** A TSIG that is not the last record, or cannot be read: FORMERR (RFC 8945 section 5.1). */
  | { ok: false; error: 'malformed' }
  /** RFC 8945 sections 5.2.1–5.2.3; answered NOTAUTH with this error in the response's TSIG. */
  | { ok: false; error: 'BADKEY' | 'BADSIG' | 'BADTIME'; tsig: TsigRecord; key?: TsigKey };

/**
 * Reads a name at `at` (following compression pointers); returns it normalised and the offset
 * past it in the message, or undefined when it runs off the message.
 */
export function readName(msg: Buffer, at: number): { name: string; end: number } | undefined {
  const labels: string[] = [];
  let end = -1;
  for (let guard = 0; guard < 128; guard++) {
    if (at >= msg.length) return undefined;
    const len = msg[at]!;
    if (len === 0) {
      if (end < 0) end = at + 1;
      return { name: normalizeName(labels.join('.')), end };
    }
    if ((len & 0xc0) === 0xc0) {
      if (at + 2 > msg.length) return undefined;
      if (end < 0) end = at + 2;
      at = ((len & 0x3f) << 8) | msg[at + 1]!;
      continue;
    }
    if (len > 63 || at + 1 + len > msg.length) return undefined;
    labels.push(msg.toString('latin1', at + 1, at + 1 + len));
    at += 1 + len;
  }
  return undefined;
}

/** Offset past the record at `at`, or undefined. */
export function skipRecord(msg: Buffer, at: number): number | undefined {
  const name = readName(msg, at);
  if (!name || name.end + 10 > msg.length) return undefined;
  const end = name.end + 10 + msg.readUInt16BE(name.end + 8);
  return end > msg.length ? undefined : end;
}

/** The TSIG record if it is the message's last additional record (RFC 8945 section 5.1). */
export function findTsig(msg: Buffer): TsigRecord | 'missing' | 'malformed' {
  if (msg.length < 12) return 'malformed';
  const counts = [4, 6, 8, 10].map((o) => msg.readUInt16BE(o));
  const total = counts.reduce((a, b) => a + b, 0);
  let at = 12;
  for (let i = 0; i < counts[0]!; i++) {
    const q = readName(msg, at);
    if (!q || q.end + 4 > msg.length) return 'malformed';
    at = q.end + 4;
  }
  let last = -1;
  let lastType = 0;
  for (let i = counts[0]!; i < total; i++) {
    const start = at;
    const name = readName(msg, at);
    if (!name || name.end + 10 > msg.length) return 'malformed';
    const type = msg.readUInt16BE(name.end);
    if (type === TSIG_TYPE && i !== total - 1) return 'malformed';
    const next = skipRecord(msg, at);
    if (next === undefined) return 'malformed';
    last = start;
    lastType = type;
    at = next;
  }
  if (lastType !== TSIG_TYPE || counts[3] === 0) return 'missing';
  return readTsig(msg, last) ?? 'malformed';
}

function readTsig(msg: Buffer, start: number): TsigRecord | undefined {
  const owner = readName(msg, start);
  if (!owner) return undefined;
  let at = owner.end + 10;
  const end = at + msg.readUInt16BE(owner.end + 8);
  const alg = readName(msg, at);
  if (!alg || alg.end + 10 > end) return undefined;
  at = alg.end;
  const timeSigned = msg.readUIntBE(at, 6);
  const fudge = msg.readUInt16BE(at + 6);
  const macSize = msg.readUInt16BE(at + 8);
  at += 10;
  if (at + macSize + 6 > end) return undefined;
  const mac = msg.subarray(at, at + macSize);
  at += macSize;
  const originalId = msg.readUInt16BE(at);
  const error = msg.readUInt16BE(at + 2);
  const otherLen = msg.readUInt16BE(at + 4);
  at += 6;
  if (at + otherLen !== end) return undefined;
  return {
    keyName: owner.name,
    algorithm: alg.name,
    timeSigned,
    fudge,
    mac: Buffer.from(mac),
    originalId,
    error,
    other: Buffer.from(msg.subarray(at, end)),
    start,
  };
}

/** The message as it was before its TSIG was added: record cut, ARCOUNT one less, the original ID. */
function unsigned(msg: Buffer, tsig: TsigRecord): Buffer {
  const out = Buffer.from(msg.subarray(0, tsig.start));
  out.writeUInt16BE(tsig.originalId, 0);
  out.writeUInt16BE(out.readUInt16BE(10) - 1, 10);
  return out;
}

function u48(v: number): Buffer {
  const b = Buffer.alloc(6);
  b.writeUIntBE(v, 0, 6);
  return b;
}

function u16(v: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(v);
  return b;
}

/** The TSIG variables of RFC 8945 section 4.3.3 (all of them, or only the timers of a later message of a stream). */
function variables(
  key: TsigKey,
  timeSigned: number,
  fudge: number,
  error: number,
  other: Buffer,
  timersOnly: boolean,
): Buffer {
  const timers = Buffer.concat([u48(timeSigned), u16(fudge)]);
  if (timersOnly) return timers;
  return Buffer.concat([
    nameWire(key.name),
    u16(CLASS_ANY),
    Buffer.alloc(4), // TTL 0
    nameWire(key.algorithm),
    timers,
    u16(error),
    u16(other.length),
    other,
  ]);
}

/** RFC 8945 section 4.3: the MAC over prior MAC (a response's request MAC, or the last message's), message and variables. */
function macOf(key: TsigKey, priorMac: Buffer | undefined, message: Buffer, vars: Buffer): Buffer {
  const h = createHmac('sha256', key.secret);
  if (priorMac) h.update(Buffer.concat([u16(priorMac.length), priorMac]));
  h.update(message);
  h.update(vars);
  return h.digest();
}

export interface SignOptions {
  /** Seconds since the epoch. */
  now: number;
  /** For a response: the request's MAC; for a later message of a stream: the previous message's. */
  priorMac?: Buffer;
  /** A later message of a multi-message response (RFC 8945 section 5.3.1): only the timers are digested. */
  continuation?: boolean;
  error?: number;
  other?: Buffer;
  /** BADKEY and BADSIG responses go unsigned: an empty MAC (RFC 8945 section 5.3.2). */
  unsignedError?: boolean;
  /** Time Signed to write (BADTIME answers the request's own, RFC 8945 section 5.2.3). */
  timeSigned?: number;
}

/** `msg` with a TSIG record appended (ARCOUNT one more), and the MAC, for the next message of a stream. */
export function sign(msg: Buffer, key: TsigKey, opts: SignOptions): { message: Buffer; mac: Buffer } {
  const error = opts.error ?? 0;
  const other = opts.other ?? Buffer.alloc(0);
  const timeSigned = opts.timeSigned ?? opts.now;
  const mac = opts.unsignedError
    ? Buffer.alloc(0)
    : macOf(
        key,
        opts.priorMac,
        msg,
        variables(key, timeSigned, FUDGE, error, other, opts.continuation === true),
      );
  const algorithm = nameWire(key.algorithm);
  const rdata = Buffer.concat([
    algorithm,
    u48(timeSigned),
    u16(FUDGE),
    u16(mac.length),
    mac,
    u16(msg.readUInt16BE(0)),
    u16(error),
    u16(other.length),
    other,
  ]);
  const record = Buffer.concat([
    nameWire(key.name),
    u16(TSIG_TYPE),
    u16(CLASS_ANY),
    Buffer.alloc(4),
    u16(rdata.length),
    rdata,
  ]);
  const message = Buffer.concat([msg, record]);
  message.writeUInt16BE(msg.readUInt16BE(10) + 1, 10);
  return { message, mac };
}

/**
 * Checks the TSIG of a request (or, with `priorMac`, of a response to our request), in RFC 8945
 * section 5.2's order: the key (5.2.1), the MAC (5.2.2), the time (5.2.3).
 */
export function verify(
  msg: Buffer,
  keys: ReadonlyMap<string, TsigKey>,
  now: number,
  priorMac?: Buffer,
): TsigCheck {
  const tsig = findTsig(msg);
  if (tsig === 'missing' || tsig === 'malformed') return { ok: false, error: tsig };
  const key = keys.get(tsig.keyName);
  if (!key || tsig.algorithm !== key.algorithm) return { ok: false, error: 'BADKEY', tsig };
  // Only full-length MACs: RFC 8945 section 5.2.2.1 allows truncation to 16 octets, none of our peers sends it.
  const expected = macOf(
    key,
    priorMac,
    unsigned(msg, tsig),
    variables(key, tsig.timeSigned, tsig.fudge, tsig.error, tsig.other, false),
  );
  if (tsig.mac.length !== MAC_LENGTH || !timingSafeEqual(tsig.mac, expected))
    return { ok: false, error: 'BADSIG', tsig, key };
  if (Math.abs(now - tsig.timeSigned) > tsig.fudge) return { ok: false, error: 'BADTIME', tsig, key };
  return { ok: true, key, tsig };
}

/** The 48-bit time for BADTIME's Other Data (RFC 8945 section 5.2.3). */
export function timeOther(now: number): Buffer {
  return u48(now);
}
