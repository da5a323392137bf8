// Encodes the answer to one (name, type) once, when the records change, into
// the bytes that follow the question of a response. Names are compressed
// (RFC 1035 section 4.1.4) against the question as if it were the template's
// own name; a response for a longer query name (wildcard synthesis, NXDOMAIN)
// shifts those pointers by the difference instead of encoding again.
import { wireLength } from '../zone/name.js';
import type { RData, RR } from '../zone/rr.js';
import type { Answer } from '../zone/zone.js';

export interface Template {
  rcode: number;
  answerCount: number;
  authorityCount: number;
  /** The records after the question, encoded for a question name of `baseLength` octets. */
  sections: Buffer;
  /** Octets of the name the sections were encoded for (the query name, "*.<encloser>" or the apex). */
  baseLength: number;
  /**
   * Offsets in `sections` of compression pointers that move with the question's length; undefined
   * when the template only serves query names of exactly `baseLength` (then nothing moves).
   * For a wildcard template, pointers to offset 12 (the query name itself) are not listed.
   */
  movable: Uint16Array | undefined;
}

const HEADER = 12;
/**
 * Set in a template's rcode octet for a referral (no AA in the response, ADR 0215); the codes
 * themselves fit in 4 bits.
 */
export const NOT_AUTHORITATIVE = 0x80;
/** Highest offset a pointer may name (14 bits), less the most a query name can add when shifted. */
const MAX_POINTER_TARGET = 0x3fff - 256;

/**
 * @param base the name the question is assumed to hold: the query name for exact matches,
 *   "*.<encloser>" for wildcard answers (owner names equal to it become pointers to the query name),
 *   or the apex for NXDOMAIN (the real query name is longer, its tail is the apex).
 * @param shifts whether responses may carry a longer question than `base`
 */
export function encodeTemplate(base: string, answer: Answer, shifts: 'no' | 'suffix' | 'wildcard'): Template {
  const w = new Writer(HEADER + wireLength(base) + 4);
  w.registerQuestion(base);
  for (const rr of answer.answer) w.record(rr);
  for (const rr of answer.authority) w.record(rr);
  const sections = Buffer.from(w.bytes());
  let movable: Uint16Array | undefined;
  if (shifts !== 'no') {
    const list = w.pointers.filter((p) => !(shifts === 'wildcard' && p.target === HEADER));
    movable = Uint16Array.from(list.map((p) => p.at - w.start));
  }
  return {
    rcode: answer.rcode | (answer.authoritative === false ? NOT_AUTHORITATIVE : 0),
    answerCount: answer.answer.length,
    authorityCount: answer.authority.length,
    sections,
    baseLength: wireLength(base),
    movable,
  };
}

/**
 * One scratch buffer for all encoding: a rebuild encodes an answer for every name and type, and a
 * fresh buffer for each would be 100,000 short-lived allocations for 100,000 records.
 */
let scratch = Buffer.alloc(65536);

class Writer {
  private buf = scratch;
  private len: number;
  private readonly table = new Map<string, number>();
  readonly pointers: { at: number; target: number }[] = [];

  constructor(readonly start: number) {
    this.len = start;
  }

  bytes(): Buffer {
    return this.buf.subarray(this.start, this.len);
  }

  /** The question's name and its suffixes sit at offset 12 onwards. */
  registerQuestion(name: string): void {
    let at = HEADER;
    for (let n = name; n !== '';) {
      this.table.set(n, at);
      const dot = n.indexOf('.');
      at += (dot < 0 ? n.length : dot) + 1;
      n = dot < 0 ? '' : n.slice(dot + 1);
    }
  }

  record(rr: RR): void {
    this.name(rr.owner, true);
    this.u16(rr.type);
    this.u16(1); // class IN
    this.u32(rr.ttl);
    const lengthAt = this.len;
    this.u16(0);
    this.rdata(rr.data);
    this.buf.writeUInt16BE(this.len - lengthAt - 2, lengthAt);
  }

  private rdata(data: RData): void {
    switch (data.kind) {
      case 'bytes':
        this.ensure(data.bytes.length);
        this.buf.set(data.bytes, this.len);
        this.len += data.bytes.length;
        return;
      case 'name':
        return this.name(data.target, true);
      case 'srv':
        this.u16(data.priority);
        this.u16(data.weight);
        this.u16(data.port);
        // RFC 2782 "Target": name compression is not to be used for this field.
        return this.name(data.target, false);
      case 'soa':
        this.name(data.mname, true);
        this.name(data.rname, true);
        this.u32(data.serial);
        this.u32(data.refresh);
        this.u32(data.retry);
        this.u32(data.expire);
        this.u32(data.minimum);
        return;
    }
  }

  private name(name: string, compress: boolean): void {
    for (let n = name; n !== '';) {
      const known = compress ? this.table.get(n) : undefined;
      if (known !== undefined) {
        this.pointers.push({ at: this.len, target: known });
        this.u16(0xc000 | known);
        return;
      }
      if (this.len <= MAX_POINTER_TARGET) this.table.set(n, this.len);
      const dot = n.indexOf('.');
      const label = dot < 0 ? n : n.slice(0, dot);
      this.ensure(label.length + 1);
      this.buf[this.len++] = label.length;
      this.len += this.buf.write(label, this.len, 'latin1');
      n = dot < 0 ? '' : n.slice(dot + 1);
    }
    this.ensure(1);
    this.buf[this.len++] = 0;
  }

  private u16(v: number): void {
    this.ensure(2);
    this.buf.writeUInt16BE(v, this.len);
    this.len += 2;
  }

  private u32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32BE(v >>> 0, this.len);
    this.len += 4;
  }

  private ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const bigger = Buffer.alloc(Math.max(this.buf.length * 2, this.len + n));
    this.buf.copy(bigger, 0, 0, this.len);
    this.buf = bigger;
    scratch = bigger;
  }
}
