// Reads what a response needs from a query, without decoding the whole
// message: header, the one question, and the OPT record (RFC 6891). Never
// throws on bad input; says what is wrong instead. Allocates nothing but the
// query name's string: the result is one object, reused for every message.

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
  /** QNAME in lower case (RFC 4343: ASCII only), labels joined by "."; no final dot, "" for the root. */
  qname: string;
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

const scratch = Buffer.alloc(512);
const q: Query = {
  status: DROP,
  rcode: 0,
  questionEnd: 12,
  qnameLength: 0,
  qname: '',
  qtype: 0,
  qclass: 0,
  edns: false,
  udpSize: 0,
  ednsVersion: 0,
  dnssecOk: false,
  tsigAt: -1,
};

/** Parses `msg`; the result is overwritten by the next call. */
export function parseQuery(msg: Buffer): Query {
  q.edns = false;
  q.tsigAt = -1;
  q.questionEnd = 12;
  if (msg.length < 12 || msg[2]! & 0x80) return status(DROP, 0); // QR: a response
  const opcode = (msg[2]! >> 3) & 0x0f;
  const qdcount = msg.readUInt16BE(4);
  // RFC 1035 section 4.1.1: only standard queries are implemented here (no NOTIFY, UPDATE, IQUERY).
  if (opcode !== 0) {
    if (qdcount === 1) readQuestion(msg);
    return status(ERROR, NOTIMP);
  }
  // RFC 9619: a query has exactly one question.
  if (qdcount !== 1 || !readQuestion(msg) || !readOpt(msg, q.questionEnd)) return status(ERROR, FORMERR);
  q.qtype = msg.readUInt16BE(q.questionEnd - 4);
  q.qclass = msg.readUInt16BE(q.questionEnd - 2);
  return status(PARSED, 0);
}

function status(s: Query['status'], rcode: number): Query {
  q.status = s;
  q.rcode = rcode;
  return q;
}

/**
 * Reads the question at offset 12 into `q` (questionEnd, qnameLength, qname); false if it runs
 * past the message, uses a pointer or is too long (then questionEnd stays 12).
 */
function readQuestion(msg: Buffer): boolean {
  let at = 12;
  let out = 0;
  for (;;) {
    if (at >= msg.length) return false;
    const len = msg[at]!;
    if (len === 0) {
      at += 1;
      break;
    }
    // A pointer (or the reserved 01/10 label types) in a question is not something a resolver sends.
    if (len > 63 || at + 1 + len > msg.length) return false;
    if (out !== 0) scratch[out++] = DOT;
    for (let i = at + 1; i <= at + len; i++) {
      const c = msg[i]!;
      scratch[out++] = c >= 0x41 && c <= 0x5a ? c | 0x20 : c === DOT ? ESCAPED_DOT : c;
    }
    at += 1 + len;
    if (at - 12 > 255) return false; // RFC 1035 section 2.3.4
  }
  if (at + 4 > msg.length) return false;
  q.questionEnd = at + 4;
  q.qnameLength = at - 12;
  q.qname = scratch.toString('latin1', 0, out);
  return true;
}

/** Reads the OPT record among the additional records, if any, into `q`; false for a malformed section or two OPTs. */
function readOpt(msg: Buffer, from: number): boolean {
  const an = msg.readUInt16BE(6);
  const ns = msg.readUInt16BE(8);
  const ar = msg.readUInt16BE(10);
  if (ar === 0) return true;
  let at = from;
  for (let i = 0; i < an + ns + ar; i++) {
    const nameStart = at;
    at = skipName(msg, at);
    if (at < 0 || at + 10 > msg.length) return false;
    const type = msg.readUInt16BE(at);
    const rdlength = msg.readUInt16BE(at + 8);
    if (i >= an + ns && type === 41) {
      // RFC 6891 section 6.1.1: one OPT, owned by the root.
      if (q.edns || msg[nameStart] !== 0) return false;
      const ttl = msg.readUInt32BE(at + 4);
      q.edns = true;
      q.udpSize = msg.readUInt16BE(at + 2);
      q.ednsVersion = (ttl >>> 16) & 0xff;
      q.dnssecOk = (ttl & 0x8000) !== 0;
    } else if (i >= an + ns && type === 250) q.tsigAt = nameStart;
    at += 10 + rdlength;
    if (at > msg.length) return false;
  }
  return true;
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
