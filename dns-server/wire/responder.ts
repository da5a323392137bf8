// The hot path: one query in, one response out. Per query it parses the
// question, finds the zone and the node, takes the answer encoded when the
// records changed, and copies it behind the question as asked (so the case
// of the query name is echoed, RFC 4343 section 4.1), patching only the ID,
// flags, counts and, for longer synthesised names, a few pointers.
import { isInZone } from '../zone/name.js';
import { T } from '../zone/rr.js';
import { closestMatch } from '../zone/wildcard.js';
import { RCODE, type Zone } from '../zone/zone.js';
import { DROP, ERROR, parseQuery, type Query } from './query.js';
import { DRAW, encodeServed, SLOT_COUNT, SLOTS, TEMPLATE_HEADER, type ServedData } from './served.js';

export interface ResponderOptions {
  /** Largest UDP response whatever the client offers (RFC 6891 section 6.2.5; 1232 by DNS Flag Day 2020). */
  maxUdpSize: number;
  /**
   * A query signed with TSIG (RFC 8945; secondaries sign their SOA queries) is answered through
   * this: it checks the signature, has `answer` respond to the query without it, and signs the
   * response (or answers NOTAUTH). Unset: the TSIG record is ignored, the response unsigned.
   */
  signed?: (msg: Buffer, answer: (unsigned: Buffer) => Buffer | undefined) => Buffer | undefined;
}

/** The result of `respond`; one object reused for every query: read it before the next call. */
export interface Outcome {
  /** The response: a new Buffer, or the `into` passed to `respond` when it fitted there. */
  response: Buffer | undefined;
  /** Octets of the response (0 for none): `response` may be longer (a slot of an output ring). */
  length: number;
  /** For metrics: the query type (undefined if the question did not parse) and the response code. */
  qtype: number | undefined;
  rcode: number;
  /** For metrics: the served zone the question falls in, if any. */
  zone: string | undefined;
}

/** Responses over TCP are limited by the two-octet length prefix (RFC 1035 section 4.2.2). */
export const TCP_MAX = 65535;
const NO_EDNS_UDP_MAX = 512; // RFC 1035 section 4.2.1
const OPT_LENGTH = 11;
const BADVERS = 16;

interface ServedZone {
  name: string;
  /** Every existing name of the zone (apex and empty non-terminals included) → its index. */
  nodes: Map<string, number>;
  /** "*.<encloser>" names by their encloser → index: a wildcard lookup builds no string. */
  wildcards: Map<string, number>;
  /** Arena offsets of each name's answers by query-type slot (see served.ts). */
  slots: Uint32Array;
  nxdomain: number;
  /** Zone cuts (ADR 0215) → arena offset of their referral; empty in a zone without any. */
  cuts: Map<string, number>;
}

const NO_CUTS: Map<string, number> = new Map();

export class Responder {
  private zones: ServedZone[] = [];
  private arena: Buffer = Buffer.alloc(0);
  private draws: Uint32Array = new Uint32Array(0);
  /** Reused for every answer: the hot path allocates nothing but the response. */
  private readonly outcome: Outcome = {
    response: undefined,
    length: 0,
    qtype: undefined,
    rcode: 0,
    zone: undefined,
  };
  /** Where the current response goes if it fits (the batched UDP path's output slot). */
  private into: Buffer | undefined;

  constructor(private readonly opts: ResponderOptions) {}

  /** Encodes the zones' answers and swaps them in (tests; the server loads from the builder). */
  load(zones: Zone[]): void {
    this.loadServed(encodeServed(zones));
  }

  /**
   * Swaps in answers encoded elsewhere (a worker thread): the arena is used as is, only the
   * name → index maps are made here (about 50 ms for 100,000 names).
   */
  loadServed(data: ServedData): void {
    const zones = data.zones.map((z): ServedZone => {
      const nodes = new Map<string, number>();
      const wildcards = new Map<string, number>();
      let i = 0;
      for (const name of z.names.split('\n')) {
        nodes.set(ownCopy(name), i);
        if (name === '*') wildcards.set('', i);
        else if (name.startsWith('*.')) wildcards.set(ownCopy(name.slice(2)), i);
        i++;
      }
      const names = z.cuts ? z.names.split('\n') : [];
      const cuts = z.cuts
        ? new Map([...z.cuts].map((i) => [ownCopy(names[i]!), z.slots[i * SLOT_COUNT]!]))
        : NO_CUTS;
      return { name: z.name, nodes, wildcards, slots: z.slots, nxdomain: z.nxdomain, cuts };
    });
    this.arena = Buffer.from(data.arena.buffer, data.arena.byteOffset, data.arena.byteLength);
    this.draws = data.draws;
    this.zones = zones;
  }

  /**
   * The response to one message, if any: over UDP sized by EDNS (RFC 6891), over TCP up to 65,535
   * octets. Written into `into` from its start when it fits there (else into a new Buffer).
   */
  respond(msg: Buffer, transport: 'udp' | 'tcp', into?: Buffer): Outcome {
    this.into = into;
    const q = parseQuery(msg);
    this.outcome.zone = undefined;
    if (q.status === DROP) return this.result(undefined, undefined, -1);
    if (q.tsigAt >= 0 && this.opts.signed) return this.respondSigned(msg, transport);
    if (q.status === ERROR)
      return this.result(
        errorResponse(msg, q.questionEnd, q.rcode, this.buffer(q.questionEnd)),
        undefined,
        q.rcode,
        q.questionEnd,
      );
    const limit =
      transport === 'tcp'
        ? TCP_MAX
        : q.edns
          ? Math.min(Math.max(q.udpSize, NO_EDNS_UDP_MAX), this.opts.maxUdpSize)
          : NO_EDNS_UDP_MAX;
    // RFC 6891 section 6.1.3: we implement version 0 only.
    if (q.edns && q.ednsVersion !== 0) return this.finish(msg, q, -1, BADVERS, false, limit);
    // Zone transfers are not offered; other classes than IN (and ANY) are not served here.
    if (q.qtype === T.AXFR || q.qtype === T.IXFR || (q.qclass !== 1 && q.qclass !== 255))
      return this.finish(msg, q, -1, RCODE.REFUSED, false, limit);
    const qname = q.qname;
    let served: ServedZone | undefined;
    for (const z of this.zones)
      if (isInZone(qname, z.name)) {
        served = z;
        break;
      }
    if (!served) return this.finish(msg, q, -1, RCODE.REFUSED, false, limit);
    this.outcome.zone = served.name;
    if (served.cuts.size !== 0) {
      const referral = referralFor(served, qname);
      if (referral >= 0) return this.finish(msg, q, referral, this.arena[referral]! & 0x0f, false, limit);
    }
    // The name; else the wildcard at the closest encloser; else NXDOMAIN.
    const index = closestMatch(served.nodes, served.wildcards, qname);
    let at = index === undefined ? served.nxdomain : served.slots[index * SLOT_COUNT + SLOTS[q.qtype]!]!;
    if (at >= DRAW) {
      // A weighted answer: one entry of its draw group, at random (the group was made at build time).
      const group = at - DRAW;
      at = this.draws[group + 1 + ((Math.random() * this.draws[group]!) | 0)]!;
    }
    return this.finish(msg, q, at, this.arena[at]!, true, limit);
  }

  /** A query with TSIG: answered unsigned, then signed (never on the hot path: only secondaries sign). */
  private respondSigned(msg: Buffer, transport: 'udp' | 'tcp'): Outcome {
    let qtype: number | undefined;
    let rcode = -1;
    let zone: string | undefined;
    const response = this.opts.signed!(msg, (unsigned) => {
      const out = this.respond(unsigned, transport);
      ({ qtype, rcode, zone } = out);
      return out.response && Buffer.from(out.response.subarray(0, out.length));
    });
    this.outcome.zone = zone;
    return this.result(response, qtype, response ? response[3]! & 0x0f : rcode);
  }

  /** @param at arena offset of the answer, or -1 for none */
  private finish(msg: Buffer, q: Query, at: number, rcode: number, aa: boolean, limit: number): Outcome {
    const arena = this.arena;
    const opt = q.edns ? OPT_LENGTH : 0;
    const qEnd = q.questionEnd;
    const movable = at < 0 ? 0 : arena.readUInt16BE(at + 8);
    const start = at < 0 ? 0 : at + TEMPLATE_HEADER + movable * 2;
    let sections = at < 0 ? 0 : arena.readUInt16BE(at + 6);
    let truncated = false;
    // RFC 2181 section 9: if the answer does not fit, say so (TC) rather than send part of an RRset;
    // the client retries over TCP. RFC 6891 section 7: the OPT still goes with it.
    if (qEnd + sections + opt > limit) {
      truncated = true;
      sections = 0;
    }
    const out = this.buffer(qEnd + sections + opt);
    msg.copy(out, 0, 0, qEnd);
    out[2] = 0x80 | (aa ? 0x04 : 0) | (truncated ? 0x02 : 0) | (msg[2]! & 0x01); // QR, AA, TC, RD copied
    out[3] = (msg[3]! & 0x10) | (rcode & 0x0f); // CD copied (RFC 4035 section 3.1.6)
    out.writeUInt16BE(1, 4);
    out.writeUInt32BE(0, 6); // ANCOUNT, NSCOUNT
    out.writeUInt16BE(opt ? 1 : 0, 10);
    if (at >= 0 && !truncated) {
      out.writeUInt16BE(arena.readUInt16BE(at + 1), 6);
      out.writeUInt16BE(arena.readUInt16BE(at + 3), 8);
      arena.copy(out, qEnd, start, start + sections);
      const delta = q.qnameLength - arena[at + 5]!;
      if (delta !== 0) {
        for (let m = at + TEMPLATE_HEADER, end = m + movable * 2; m < end; m += 2) {
          const p = qEnd + arena.readUInt16BE(m);
          out.writeUInt16BE(out.readUInt16BE(p) + delta, p);
        }
      }
    }
    if (opt) writeOpt(out, qEnd + sections, this.opts.maxUdpSize, rcode >> 4, q.dnssecOk);
    return this.result(out, q.qtype, rcode, qEnd + sections + opt);
  }

  /** `size` octets to write a response into: the caller's slot if it fits, else a new Buffer. */
  private buffer(size: number): Buffer {
    const into = this.into;
    return into !== undefined && size <= into.length ? into : Buffer.allocUnsafe(size);
  }

  private result(
    response: Buffer | undefined,
    qtype: number | undefined,
    rcode: number,
    length = response?.length ?? 0,
  ): Outcome {
    const o = this.outcome;
    o.response = response;
    o.length = length;
    o.qtype = qtype;
    o.rcode = rcode;
    return o;
  }
}

/**
 * `s` in memory of its own. `split` and `slice` return views into the whole names string (V8's
 * sliced strings, from 13 characters on); as Map keys those are read through their parent at every
 * comparison, which took about 17 % of the answering process's time once the batched UDP path had
 * removed the system-call overhead (perf, 20,000 names; docs/adr/0105).
 */
function ownCopy(s: string): string {
  return s.length < 13 ? s : Buffer.from(s, 'latin1').toString('latin1');
}

/**
 * The referral of the zone cut at or above `qname` (RFC 1034 section 4.3.2 step 3b), or -1. Walked
 * only in zones with cuts. DS at the cut gets the referral too until zones are signed (issue 44
 * answers it from the parent, RFC 4035 section 3.1.4.1).
 */
function referralFor(served: ServedZone, qname: string): number {
  for (let name = qname; name.length > served.name.length; name = name.slice(name.indexOf('.') + 1)) {
    const at = served.cuts.get(name);
    if (at !== undefined) return at;
  }
  return -1;
}

/** Header (and the question, when it parsed) of the query, with an error code and no records. */
function errorResponse(msg: Buffer, questionEnd: number, rcode: number, out: Buffer): Buffer {
  msg.copy(out, 0, 0, questionEnd);
  out[2] = 0x80 | (msg[2]! & 0x79); // QR, opcode and RD as asked
  out[3] = rcode;
  out.writeUInt16BE(questionEnd > 12 ? 1 : 0, 4);
  out.writeUInt32BE(0, 6);
  out.writeUInt16BE(0, 10);
  return out;
}

/** RFC 6891 section 6.1.2: root owner, CLASS = our UDP size, TTL = extended RCODE, version 0, DO. */
function writeOpt(out: Buffer, at: number, udpSize: number, extendedRcode: number, dnssecOk: boolean): void {
  out[at] = 0;
  out.writeUInt16BE(41, at + 1);
  out.writeUInt16BE(udpSize, at + 3);
  out[at + 5] = extendedRcode;
  out[at + 6] = 0;
  out.writeUInt16BE(dnssecOk ? 0x8000 : 0, at + 7);
  out.writeUInt16BE(0, at + 9);
}
