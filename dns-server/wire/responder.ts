// The hot path: one query in, one response out. Per query it parses the
// question, finds the zone and the node, takes the answer encoded when the
// records changed, and copies it behind the question as asked (so the case
// of the query name is echoed, RFC 4343 section 4.1), patching only the ID,
// flags, counts and, for longer synthesised names, a few pointers.
import { isInZone } from '../zone/name.js';
import { T } from '../zone/rr.js';
import { closestMatch, RCODE, type Zone, type ZoneNode } from '../zone/zone.js';
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

/**
 * Slot of each query type whose answers can differ; every other type gets the same (negative)
 * answer, slot 0. A node keeps its answers in an array of these slots (cheaper than a Map).
 */
const SLOT_TYPES = [0, T.A, T.AAAA, T.CNAME, T.SRV, T.TXT, T.SOA, T.NS, T.ANY];
const SLOT_COUNT = SLOT_TYPES.length;
const SLOTS = new Uint8Array(65536);
SLOT_TYPES.forEach((type, slot) => (SLOTS[type] = slot));

/** A name's encoded answers by query-type slot; names without data share their zone's NODATA. */
type ServedNode = Template[];

interface ServedZone {
  name: string;
  /** Every existing name of the zone (apex and empty non-terminals included). */
  nodes: Map<string, ServedNode>;
  nxdomain: Template;
}

export class Responder {
  private zones: ServedZone[] = [];

  constructor(private readonly opts: ResponderOptions) {}

  /**
   * Swaps in new zones, every answer encoded beforehand. Only the encoded answers are kept: the
   * zones' records are not needed to answer, and not keeping them halves the memory.
   */
  load(zones: Zone[]): void {
    const served = zones.map((zone): ServedZone => {
      const negative = zone.negativeSoa();
      const nodata = encodeTemplate(
        zone.name,
        { rcode: RCODE.NOERROR, answer: [], authority: [negative] },
        'suffix',
      );
      const nxdomain = encodeTemplate(
        zone.name,
        { rcode: RCODE.NXDOMAIN, answer: [], authority: [negative] },
        'suffix',
      );
      const empty: ServedNode = new Array<Template>(SLOT_COUNT).fill(nodata);
      const nodes = new Map<string, ServedNode>();
      for (const [name, node] of zone.nodes)
        nodes.set(name, node.rrsets.size === 0 ? empty : encodeNode(zone, node, nodata));
      return { name: zone.name, nodes, nxdomain };
    });
    // Longest zone first so that a query lands in the most specific zone.
    this.zones = served.sort((a, b) => b.name.length - a.name.length);
  }

  /** The response to one message, if any: over UDP sized by EDNS (RFC 6891), over TCP up to 65,535 octets. */
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
    const served = this.zones.find((z) => isInZone(q.qname, z.name));
    if (!served) return this.finish(msg, q, undefined, RCODE.REFUSED, false, limit);
    const match = closestMatch(served.nodes, q.qname);
    const template = match.kind === 'nxdomain' ? served.nxdomain : match.node[SLOTS[q.qtype]!]!;
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
      out.writeUInt16BE(t.answerCount, 6);
      out.writeUInt16BE(t.authorityCount, 8);
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

/** Every slot's answer at a node that has records. */
function encodeNode(zone: Zone, node: ZoneNode, nodata: Template): ServedNode {
  const mode = node.wildcard ? 'wildcard' : 'no';
  const chases = node.rrsets.has(T.CNAME);
  const slots = new Array<Template>(SLOT_COUNT);
  SLOT_TYPES.forEach((type, slot) => {
    if (type === T.ANY || chases || node.rrsets.has(type))
      slots[slot] = encodeTemplate(node.name, zone.answerFor({ kind: 'exact', node }, node.name, type), mode);
    else slots[slot] = nodata;
  });
  // ANY at a name with one RRset is that RRset's answer: share the bytes.
  if (node.rrsets.size === 1 && !chases)
    slots[SLOTS[T.ANY]!] = slots[SLOTS[node.rrsets.keys().next().value!]!]!;
  return slots;
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
