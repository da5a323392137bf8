// The hot path: one query in, one response out. Per query it parses the
// question, finds the zone and the node, takes the answer encoded when the
// records changed, and copies it behind the question as asked (so the case
// of the query name is echoed, RFC 4343 section 4.1), patching only the ID,
// flags, counts and, for longer synthesised names, a few pointers.
import { isInZone } from '../zone/name.js';
import { T } from '../zone/rr.js';
import { RCODE, type Zone, type ZoneNode } from '../zone/zone.js';
import { parseQuery, type Query } from './query.js';
import { encodeTemplate, type Template } from './template.js';

export interface ResponderOptions {
  /** Largest UDP response whatever the client offers (RFC 6891 section 6.2.5; 1232 by DNS Flag Day 2020). */
  maxUdpSize: number;
}

export interface Outcome {
  response: Buffer | undefined;
  /** For metrics: the query type (undefined if the question did not parse) and the response code. */
  qtype: number | undefined;
  rcode: number;
}

/** Responses over TCP are limited by the two-octet length prefix (RFC 1035 section 4.2.2). */
export const TCP_MAX = 65535;
const NO_EDNS_UDP_MAX = 512; // RFC 1035 section 4.2.1
const OPT_LENGTH = 11;
const BADVERS = 16;

/** Query types whose answers differ; every other type gets the same (negative) answer as type 0. */
const DISTINCT_TYPES = new Set<number>([T.A, T.AAAA, T.CNAME, T.SRV, T.TXT, T.SOA, T.NS, T.ANY]);

interface ServedZone {
  zone: Zone;
  nxdomain: Template;
}

export class Responder {
  private zones: ServedZone[] = [];

  constructor(private readonly opts: ResponderOptions) {}

  /** Swaps in new zones; precomputes every positive answer and each zone's NXDOMAIN first. */
  load(zones: Zone[]): void {
    const served = zones.map((zone) => {
      for (const node of zone.nodes.values())
        for (const type of node.rrsets.keys()) templateFor(zone, node, type);
      const nxdomain = encodeTemplate(
        zone.name,
        zone.answerFor({ kind: 'nxdomain' }, zone.name, 0),
        'suffix',
      );
      return { zone, nxdomain };
    });
    // Longest zone first so that a query lands in the most specific zone.
    this.zones = served.sort((a, b) => b.zone.name.length - a.zone.name.length);
  }

  /** @param maxSize TCP_MAX over TCP; ignored over UDP, where EDNS decides */
  respond(msg: Buffer, transport: 'udp' | 'tcp'): Outcome {
    const parsed = parseQuery(msg);
    if (!parsed.ok) {
      if (parsed.drop) return { response: undefined, qtype: undefined, rcode: -1 };
      return {
        response: errorResponse(msg, parsed.questionEnd, parsed.rcode),
        qtype: undefined,
        rcode: parsed.rcode,
      };
    }
    const q = parsed.query;
    const limit =
      transport === 'tcp'
        ? TCP_MAX
        : q.edns
          ? Math.min(Math.max(q.edns.udpSize, NO_EDNS_UDP_MAX), this.opts.maxUdpSize)
          : NO_EDNS_UDP_MAX;
    // RFC 6891 section 6.1.3: we implement version 0 only.
    if (q.edns && q.edns.version !== 0) return this.finish(msg, q, undefined, BADVERS, false, limit);
    // Zone transfers are not offered; other classes than IN (and ANY) are not served here.
    if (q.qtype === T.AXFR || q.qtype === T.IXFR || (q.qclass !== 1 && q.qclass !== 255))
      return this.finish(msg, q, undefined, RCODE.REFUSED, false, limit);
    const served = this.zones.find((z) => isInZone(q.qname, z.zone.name));
    if (!served) return this.finish(msg, q, undefined, RCODE.REFUSED, false, limit);
    const { zone } = served;
    const match = zone.find(q.qname);
    const template = match.kind === 'nxdomain' ? served.nxdomain : templateFor(zone, match.node, q.qtype);
    return this.finish(msg, q, template, template.rcode, true, limit);
  }

  private finish(
    msg: Buffer,
    q: Query,
    t: Template | undefined,
    rcode: number,
    aa: boolean,
    limit: number,
  ): Outcome {
    const opt = q.edns ? OPT_LENGTH : 0;
    const qEnd = q.questionEnd;
    let sections = t ? t.sections.length : 0;
    let truncated = false;
    // RFC 2181 section 9: if the answer does not fit, say so (TC) rather than send part of an RRset;
    // the client retries over TCP. RFC 6891 section 7: the OPT still goes with it.
    if (qEnd + sections + opt > limit) {
      truncated = true;
      sections = 0;
    }
    const out = Buffer.allocUnsafe(qEnd + sections + opt);
    msg.copy(out, 0, 0, qEnd);
    out[2] = 0x80 | (aa ? 0x04 : 0) | (truncated ? 0x02 : 0) | (msg[2]! & 0x01); // QR, AA, TC, RD copied
    out[3] = (msg[3]! & 0x10) | (rcode & 0x0f); // CD copied (RFC 4035 section 3.1.6)
    out.writeUInt16BE(1, 4);
    out.writeUInt32BE(0, 6); // ANCOUNT, NSCOUNT
    out.writeUInt16BE(opt ? 1 : 0, 10);
    if (t && !truncated) {
      out.writeUInt16BE(t.counts[0], 6);
      out.writeUInt16BE(t.counts[1], 8);
      out.writeUInt16BE(t.counts[2] + (opt ? 1 : 0), 10);
      t.sections.copy(out, qEnd);
      const delta = q.qnameLength - t.baseLength;
      if (delta !== 0 && t.movable) {
        for (const at of t.movable) out.writeUInt16BE(out.readUInt16BE(qEnd + at) + delta, qEnd + at);
      }
    }
    if (opt) writeOpt(out, qEnd + sections, this.opts.maxUdpSize, rcode >> 4, q.edns!.dnssecOk);
    return { response: out, qtype: q.qtype, rcode };
  }
}

/** The template answering `qtype` at a node, built on first use and kept with the node. */
function templateFor(zone: Zone, node: ZoneNode, qtype: number): Template {
  const key = DISTINCT_TYPES.has(qtype) ? qtype : 0;
  let t = node.cache.get(key) as Template | undefined;
  if (!t) {
    t = encodeTemplate(
      node.name,
      zone.answerFor({ kind: 'exact', node }, node.name, qtype),
      node.wildcard ? 'wildcard' : 'no',
    );
    node.cache.set(key, t);
  }
  return t;
}

/** Header (and the question, when it parsed) of the query, with an error code and no records. */
function errorResponse(msg: Buffer, questionEnd: number, rcode: number): Buffer {
  const out = Buffer.allocUnsafe(questionEnd);
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
