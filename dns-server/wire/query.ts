// Reads what a response needs from a query, without decoding the whole
// message: header, the one question, and the OPT record (RFC 6891). Never
// throws on bad input; says what is wrong instead.

export interface Query {
  /** Offset just past the question (header + QNAME + QTYPE + QCLASS). */
  questionEnd: number;
  /** Octets of QNAME on the wire. */
  qnameLength: number;
  /** QNAME in lower case (RFC 4343: ASCII only), labels joined by "."; no final dot, "" for the root. */
  qname: string;
  qtype: number;
  qclass: number;
  /** Present when the query has an OPT record. */
  edns: { udpSize: number; version: number; dnssecOk: boolean } | undefined;
}

export type ParseResult =
  | { ok: true; query: Query }
  /** Not worth an answer: too short for a header, or a response (answering responses invites loops). */
  | { ok: false; drop: true }
  | { ok: false; drop: false; rcode: number; /** question parsed, safe to echo */ questionEnd: number };

const FORMERR = 1;
const NOTIMP = 4;
const DOT = 0x2e;
/** Stands in for a "." byte inside a label so that "a.b" as one label never matches the two labels a.b. */
const ESCAPED_DOT = 0x00;

const scratch = Buffer.alloc(512);

export function parseQuery(msg: Buffer): ParseResult {
  if (msg.length < 12) return { ok: false, drop: true };
  if (msg[2]! & 0x80) return { ok: false, drop: true }; // QR: a response
  const opcode = (msg[2]! >> 3) & 0x0f;
  const qdcount = msg.readUInt16BE(4);
  // RFC 1035 section 4.1.1: only standard queries are implemented here (no NOTIFY, UPDATE, IQUERY).
  if (opcode !== 0) {
    const q = qdcount === 1 ? readQuestion(msg) : undefined;
    return { ok: false, drop: false, rcode: NOTIMP, questionEnd: q ? q.end : 12 };
  }
  // RFC 9619: a query has exactly one question.
  if (qdcount !== 1) return { ok: false, drop: false, rcode: FORMERR, questionEnd: 12 };
  const q = readQuestion(msg);
  if (!q) return { ok: false, drop: false, rcode: FORMERR, questionEnd: 12 };
  const edns = readOpt(msg, q.end);
  if (edns === 'bad') return { ok: false, drop: false, rcode: FORMERR, questionEnd: q.end };
  return {
    ok: true,
    query: {
      questionEnd: q.end,
      qnameLength: q.nameLength,
      qname: q.name,
      qtype: msg.readUInt16BE(q.end - 4),
      qclass: msg.readUInt16BE(q.end - 2),
      edns,
    },
  };
}

/** The question at offset 12; undefined if it runs past the message, uses a pointer or is too long. */
function readQuestion(msg: Buffer): { end: number; nameLength: number; name: string } | undefined {
  let at = 12;
  let out = 0;
  for (;;) {
    if (at >= msg.length) return undefined;
    const len = msg[at]!;
    if (len === 0) {
      at += 1;
      break;
    }
    // A pointer (or the reserved 01/10 label types) in a question is not something a resolver sends.
    if (len > 63 || at + 1 + len > msg.length) return undefined;
    if (out !== 0) scratch[out++] = DOT;
    for (let i = at + 1; i <= at + len; i++) {
      const c = msg[i]!;
      scratch[out++] = c >= 0x41 && c <= 0x5a ? c | 0x20 : c === DOT ? ESCAPED_DOT : c;
    }
    at += 1 + len;
    if (at - 12 > 255) return undefined; // RFC 1035 section 2.3.4
  }
  if (at + 4 > msg.length) return undefined;
  return { end: at + 4, nameLength: at - 12, name: scratch.toString('latin1', 0, out) };
}

/** The OPT record among the additional records, if any; 'bad' for a malformed section or two OPTs. */
function readOpt(msg: Buffer, from: number): Query['edns'] | 'bad' {
  const an = msg.readUInt16BE(6);
  const ns = msg.readUInt16BE(8);
  const ar = msg.readUInt16BE(10);
  if (ar === 0) return undefined;
  let at = from;
  let edns: Query['edns'];
  for (let i = 0; i < an + ns + ar; i++) {
    const nameStart = at;
    at = skipName(msg, at);
    if (at < 0 || at + 10 > msg.length) return 'bad';
    const type = msg.readUInt16BE(at);
    const rdlength = msg.readUInt16BE(at + 8);
    if (i >= an + ns && type === 41) {
      // RFC 6891 section 6.1.1: one OPT, owned by the root.
      if (edns || msg[nameStart] !== 0) return 'bad';
      const ttl = msg.readUInt32BE(at + 4);
      edns = {
        udpSize: msg.readUInt16BE(at + 2),
        version: (ttl >>> 16) & 0xff,
        dnssecOk: (ttl & 0x8000) !== 0,
      };
    }
    at += 10 + rdlength;
    if (at > msg.length) return 'bad';
  }
  return edns;
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
