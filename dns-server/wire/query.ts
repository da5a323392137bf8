// Reads what a response needs from a query, without decoding the whole
// message: header, the one question, and the OPT record (RFC 6891). Never
// throws on bad input; says what is wrong instead. Allocates nothing: the
// result is one object, reused for every message, and the query name is kept
// in wire form (lower case) for the name table; its string is made only when
// asked for.
import { u16 } from './octets.js';

export const PARSED = 0;
/** Not worth an answer: too short for a header, or a response (answering responses invites loops). */
export const DROP = 1;
/** Answer with `rcode` and no records; the header and `questionEnd` octets are safe to echo. */
export const ERROR = 2;

export interface Query {
  status: typeof PARSED | typeof DROP | typeof ERROR;
  /** With ERROR: FORMERR or NOTIMP. */
  rcode: number;
  /** Offset just past the question (header + QNAME + QTYPE + QCLASS); 12 if it did not parse. */
  questionEnd: number;
  /** Octets of QNAME on the wire. */
  qnameLength: number;
  /**
   * QNAME in lower case (RFC 4343: ASCII only), labels joined by "."; no final dot, "" for the root.
   * Made when first read (the hot path reads `name` instead).
   */
  readonly qname: string;
  /** QNAME in wire form and lower case, from offset 0, `qnameLength` octets. Overwritten by the next parse. */
  readonly name: Uint8Array;
  /** Offset in `name` of each label's length octet, and at [labelCount] of the final 0. */
  readonly labelStarts: Int32Array;
  labelCount: number;
  qtype: number;
  qclass: number;
  /** True when the query has an OPT record; then the three fields after it are its contents. */
  edns: boolean;
  udpSize: number;
  ednsVersion: number;
  dnssecOk: boolean;
  /** Offset of a TSIG record (RFC 8945) among the additional records; -1 for none. */
  tsigAt: number;
}

const FORMERR = 1;
const NOTIMP = 4;
const DOT = 0x2e;
/** Stands in for a "." byte inside a label so that "a.b" as one label never matches the two labels a.b. */
const ESCAPED_DOT = 0x00;

/**
 * Octets of a name's labels on the wire at most (RFC 1035 section 2.3.4 counts the final 0 too,
 * but a name of 255 octets before it has always been answered, so it still is).
 */
const MAX_LABELS_LENGTH = 255;

class ParsedQuery implements Query {
  status: Query['status'] = DROP;
  rcode = 0;
  questionEnd = 12;
  qnameLength = 0;
  readonly name = new Uint8Array(MAX_LABELS_LENGTH + 1);
  readonly labelStarts = new Int32Array(MAX_LABELS_LENGTH + 1);
  labelCount = 0;
  qtype = 0;
  qclass = 0;
  edns = false;
  udpSize = 0;
  ednsVersion = 0;
  dnssecOk = false;
  tsigAt = -1;
  /** `qname` once made for this parse. */
  text: string | undefined;

  get qname(): string {
    return (this.text ??= dotted(this.name, this.labelStarts, this.labelCount));
  }
}

const q = new ParsedQuery();

/** Parses `msg`; the result is overwritten by the next call. */
export function parseQuery(msg: Buffer): Query {
  q.edns = false;
  // A query without an OPT record asks no DNSSEC records, whatever the one before it asked.
  q.dnssecOk = false;
  q.tsigAt = -1;
  q.questionEnd = 12;
  if (msg.length < 12 || msg[2]! & 0x80) return status(DROP, 0); // QR: a response
  const opcode = (msg[2]! >> 3) & 0x0f;
  const qdcount = u16(msg, 4);
  // RFC 1035 section 4.1.1: only standard queries are implemented here (no NOTIFY, UPDATE, IQUERY).
  if (opcode !== 0) {
    if (qdcount === 1) readQuestion(msg);
    return status(ERROR, NOTIMP);
  }
  // RFC 9619: a query has exactly one question.
  if (qdcount !== 1 || !readQuestion(msg) || !readOpt(msg, q.questionEnd)) return status(ERROR, FORMERR);
  q.qtype = u16(msg, q.questionEnd - 4);
  q.qclass = u16(msg, q.questionEnd - 2);
  return status(PARSED, 0);
}

function status(s: Query['status'], rcode: number): Query {
  q.status = s;
  q.rcode = rcode;
  return q;
}

/**
 * Reads the question at offset 12 into `q` (questionEnd, qnameLength, name, labelStarts,
 * labelCount); false if it runs past the message, uses a pointer or is too long (then questionEnd
 * stays 12).
 */
function readQuestion(msg: Buffer): boolean {
  const name = q.name;
  const starts = q.labelStarts;
  q.text = undefined;
  let at = 12;
  let labels = 0;
  for (;;) {
    if (at >= msg.length) return false;
    const len = msg[at]!;
    starts[labels] = at - 12;
    name[at - 12] = len;
    if (len === 0) {
      at += 1;
      break;
    }
    // A pointer (or the reserved 01/10 label types) in a question is not something a resolver sends.
    if (len > 63 || at + 1 + len > msg.length || at - 12 + 1 + len > MAX_LABELS_LENGTH) return false;
    for (let i = at + 1; i <= at + len; i++) {
      const c = msg[i]!;
      name[i - 12] = c >= 0x41 && c <= 0x5a ? c | 0x20 : c;
    }
    labels++;
    at += 1 + len;
  }
  if (at + 4 > msg.length) return false;
  q.questionEnd = at + 4;
  q.qnameLength = at - 12;
  q.labelCount = labels;
  return true;
}

/** The wire name as the zone writes names: labels joined by "."; a "." inside a label as ESCAPED_DOT. */
function dotted(name: Uint8Array, starts: Int32Array, count: number): string {
  let s = '';
  for (let k = 0; k < count; k++) {
    if (k !== 0) s += '.';
    for (let i = starts[k]! + 1; i <= starts[k]! + name[starts[k]!]!; i++) {
      const c = name[i]!;
      s += String.fromCharCode(c === DOT ? ESCAPED_DOT : c);
    }
  }
  return s;
}

/** Reads the OPT record among the additional records, if any, into `q`; false for a malformed section or two OPTs. */
function readOpt(msg: Buffer, from: number): boolean {
  const an = u16(msg, 6);
  const ns = u16(msg, 8);
  const ar = u16(msg, 10);
  if (ar === 0) return true;
  // What resolvers send: one OPT, owned by the root, right after the question and ending the message.
  if (
    an + ns === 0 &&
    ar === 1 &&
    from + 11 <= msg.length &&
    msg[from] === 0 &&
    msg[from + 1] === 0 &&
    msg[from + 2] === 41 &&
    from + 11 + u16(msg, from + 9) === msg.length
  ) {
    takeOpt(msg, from + 1);
    return true;
  }
  let at = from;
  for (let i = 0; i < an + ns + ar; i++) {
    const nameStart = at;
    at = skipName(msg, at);
    if (at < 0 || at + 10 > msg.length) return false;
    const type = u16(msg, at);
    const rdlength = u16(msg, at + 8);
    if (i >= an + ns && type === 41) {
      // RFC 6891 section 6.1.1: one OPT, owned by the root.
      if (q.edns || msg[nameStart] !== 0) return false;
      takeOpt(msg, at);
    } else if (i >= an + ns && type === 250) q.tsigAt = nameStart;
    at += 10 + rdlength;
    if (at > msg.length) return false;
  }
  return true;
}

/** The OPT record whose TYPE is at `typeAt` into `q`: its CLASS is the UDP size, its TTL the version and DO bit. */
function takeOpt(msg: Buffer, typeAt: number): void {
  q.edns = true;
  q.udpSize = u16(msg, typeAt + 2);
  q.ednsVersion = msg[typeAt + 5]!; // the TTL's second octet (extended RCODE first)
  q.dnssecOk = (msg[typeAt + 6]! & 0x80) !== 0;
}

function skipName(msg: Buffer, from: number): number {
  let at = from;
  for (let guard = 0; guard < 128; guard++) {
    if (at >= msg.length) return -1;
    const len = msg[at]!;
    if (len === 0) return at + 1;
    if ((len & 0xc0) === 0xc0) return at + 2 > msg.length ? -1 : at + 2;
    if (len > 63) return -1;
    at += 1 + len;
  }
  return -1;
}
