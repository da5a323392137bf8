// The served data in compact form: every encoded answer of every zone in one
// byte arena, each name's answers as arena offsets by query-type slot in a
// Uint32Array, and the names in a hash table over their wire form
// (name-table.ts). Built where the zones are built (a worker thread, see
// ../build/builder.ts) and transferred without copying; the responder uses it
// as it comes. No per-answer JS objects survive a build: 100,000 records cost
// a few megabytes of arena, not a heap of Buffers.
import { placeArena, type ArenaPages } from './arena-memory.js';
import { T } from '../zone/rr.js';
import { RCODE, type Zone, type ZoneNode } from '../zone/zone.js';
import { buildNameTable, type NameTableData } from './name-table.js';
import { encodeTemplate, type Template } from './template.js';
import { fittingTemplate } from './fitting.js';
import { encodeDraw } from './draw.js';
import { imageBuffers, type TransferImage } from '../transfer/image.js';
import { encodeSignedZone, type SignedZoneData } from './signed.js';
import { SignedZone } from '../dnssec/signed-zone.js';
import type { ZoneKey } from '../dnssec/key.js';
import type { SignatureCache } from '../dnssec/rrsig.js';

/**
 * Slot of each query type whose answers can differ; every other type gets the same (negative)
 * answer, slot 0.
 */
export const SLOT_TYPES = [0, T.A, T.AAAA, T.CNAME, T.SRV, T.TXT, T.SOA, T.NS, T.DNSKEY, T.NSEC, T.ANY];
export const SLOT_COUNT = SLOT_TYPES.length;
export const SLOTS = new Uint8Array(65536);
SLOT_TYPES.forEach((type, slot) => (SLOTS[type] = slot));

/**
 * One encoded answer in the arena, at an offset: rcode (1 octet), answer count (2), authority
 * count (2), base length (1), sections length (2), movable pointer count (2), the movable
 * pointers' offsets (2 each), then the sections' bytes. See Template.
 */
export const TEMPLATE_HEADER = 10;

/** A slot at or above DRAW is a draw group's (draw.ts): a traffic policy's weighted variants, ADR 0209. */
export { DRAW } from './draw.js';

export interface ServedZoneData {
  name: string;
  /** The zone's existing names (apex and empty non-terminals included); name i is index i. */
  table: NameTableData;
  /** For name i, slots[i * SLOT_COUNT + slot] is the arena offset of its answer. */
  slots: Uint32Array;
  /** Arena offset of the zone's NXDOMAIN answer. */
  nxdomain: number;
  /** Indexes of the names that are zone cuts (their slots hold the referral); absent without cuts. */
  cuts?: Uint32Array;
  /** A signed zone's answers to queries with DO (ADR 0106); undefined for a zone not signed. */
  dnssec?: SignedZoneData;
}

/** What signs the zones that have a key, when they are encoded. */
export interface ZoneSigning {
  /** By zone apex. */
  keys: ReadonlyMap<string, ZoneKey>;
  signatures: SignatureCache;
  /** Unix seconds. */
  now: number;
}

export interface ServedData {
  arena: Uint8Array;
  /** Whether `arena` is on memory advised for huge pages (arena-memory.ts). */
  arenaPages: ArenaPages;
  zones: ServedZoneData[];
  /** Draw groups (see DRAW); empty without weighted answers. */
  draws: Uint32Array;
  /** The zones with secondaries, as their transfers read them (../transfer/). */
  transfer?: TransferImage[];
}

/** The ArrayBuffers to transfer (not copy) with a postMessage of `data`. */
export function transferList(data: ServedData): ArrayBuffer[] {
  return [
    data.arena.buffer as ArrayBuffer,
    data.draws.buffer as ArrayBuffer,
    ...data.zones.flatMap((z) => [
      z.slots.buffer as ArrayBuffer,
      z.table.keys.buffer as ArrayBuffer,
      z.table.buckets.buffer as ArrayBuffer,
      z.table.wildcardOf.buffer as ArrayBuffer,
      ...(z.cuts ? [z.cuts.buffer as ArrayBuffer] : []),
      ...(z.dnssec
        ? [
            z.dnssec.slots.buffer,
            z.dnssec.proofs.buffer,
            z.dnssec.wildcardCover.buffer,
            z.dnssec.ownRank.buffer,
            z.dnssec.cover.childrenOf.buffer,
            z.dnssec.cover.labels.buffer,
            z.dnssec.cover.labelAt.buffer,
            z.dnssec.cover.last.buffer,
            z.dnssec.cover.before.buffer,
          ]
        : []
      ).map((b) => b as ArrayBuffer),
    ]),
    ...imageBuffers(data.transfer ?? []),
  ];
}

class Arena {
  buf = Buffer.alloc(1 << 20);
  len = 0;

  /**
   * Writes `t` and returns its offset. Templates are made once per answer (shared answers, like a
   * zone's NODATA, are added once and their offset reused), so nothing here remembers them: with
   * 100,000 records that memory was tens of megabytes of the build's peak.
   */
  add(t: Template): number {
    const movable = t.movable ?? EMPTY;
    const size = TEMPLATE_HEADER + movable.length * 2 + t.sections.length;
    if (this.len + size > this.buf.length) {
      const bigger = Buffer.alloc(Math.max(this.buf.length * 2, this.len + size));
      this.buf.copy(bigger, 0, 0, this.len);
      this.buf = bigger;
    }
    const at = this.len;
    const b = this.buf;
    b[at] = t.rcode;
    b.writeUInt16BE(t.answerCount, at + 1);
    b.writeUInt16BE(t.authorityCount, at + 3);
    b[at + 5] = t.baseLength;
    b.writeUInt16BE(t.sections.length, at + 6);
    b.writeUInt16BE(movable.length, at + 8);
    let p = at + TEMPLATE_HEADER;
    for (const m of movable) {
      b.writeUInt16BE(m, p);
      p += 2;
    }
    t.sections.copy(b, p);
    this.len = at + size;
    return at;
  }

  /** A copy that owns its whole ArrayBuffer (transferable, no pool slab), on huge pages when large. */
  done(): { arena: Uint8Array; pages: ArenaPages } {
    return placeArena(this.buf.subarray(0, this.len));
  }
}
const EMPTY = new Uint16Array(0);

/** Encodes every answer of the zones (longest zone first, so a query lands in the most specific one). */
/** @param onSigned told each zone signed, for what else reads the signed zone (a zone transfer) */
export function encodeServed(
  zones: Zone[],
  signing?: ZoneSigning,
  onSigned?: (signed: SignedZone) => void,
): ServedData {
  const arena = new Arena();
  const draws: number[] = [];
  signing?.signatures.begin();
  const served = zones.map((zone): ServedZoneData => {
    const key = signing?.keys.get(zone.name);
    // Before the DO=0 answers: signing adds the DNSKEY and NSEC RRsets they answer too.
    const signed = key && signing ? new SignedZone(zone, key, signing.signatures, signing.now) : undefined;
    if (signed) onSigned?.(signed);
    const negative = zone.negativeSoa();
    const nodata = arena.add(
      encodeTemplate(zone.name, { rcode: RCODE.NOERROR, answer: [], authority: [negative] }, 'suffix'),
    );
    const nxdomain = arena.add(
      encodeTemplate(zone.name, { rcode: RCODE.NXDOMAIN, answer: [], authority: [negative] }, 'suffix'),
    );
    const names: string[] = [];
    const slots = new Uint32Array(zone.nodes.size * SLOT_COUNT);
    const cuts: number[] = [];
    let i = 0;
    for (const [name, node] of zone.nodes) {
      names.push(name);
      if (node.cut) {
        // One referral for the cut and every name below it: encoded for the cut, shifted for longer names.
        const referral = arena.add(
          encodeTemplate(name, zone.answerFor({ kind: 'exact', node }, name, T.NS), 'suffix'),
        );
        slots.fill(referral, i * SLOT_COUNT, (i + 1) * SLOT_COUNT);
        cuts.push(i);
      } else encodeNode(zone, node, nodata, arena, slots, i * SLOT_COUNT, draws);
      i++;
    }
    const dnssec = signed && encodeSignedZone(signed, SLOT_TYPES, (t) => arena.add(t), draws);
    return {
      name: zone.name,
      table: buildNameTable(names),
      slots,
      nxdomain,
      ...(cuts.length ? { cuts: Uint32Array.from(cuts) } : {}),
      ...(dnssec ? { dnssec } : {}),
    };
  });
  signing?.signatures.end();
  served.sort((a, b) => b.name.length - a.name.length);
  const { arena: octets, pages } = arena.done();
  return { arena: octets, arenaPages: pages, zones: served, draws: Uint32Array.from(draws) };
}

/** The answer's template, if it fits a DNS message over TCP (fitting.ts). */
function fitting(zone: Zone, node: ZoneNode, type: number, mode: 'no' | 'wildcard'): Template {
  return fittingTemplate(node, type, mode, (t) =>
    encodeTemplate(node.name, zone.answerFor({ kind: 'exact', node }, node.name, t), mode),
  );
}

/** Every slot's answer at a node (names without data share their zone's NODATA). */
function encodeNode(
  zone: Zone,
  node: ZoneNode,
  nodata: number,
  arena: Arena,
  slots: Uint32Array,
  at: number,
  draws: number[],
): void {
  if (node.rrsets.size === 0) {
    slots.fill(nodata, at, at + SLOT_COUNT);
    return;
  }
  const mode = node.wildcard ? 'wildcard' : 'no';
  const chases = node.rrsets.has(T.CNAME);
  // ANY at a name with one RRset is that RRset's answer: share the bytes (ANY is the last slot).
  const anyShares = node.rrsets.size === 1 && !chases;
  SLOT_TYPES.forEach((type, slot) => {
    const variants = type !== T.ANY && !chases ? node.rrsets.get(type)?.variants : undefined;
    if (variants)
      slots[at + slot] = encodeDraw(
        node,
        type,
        variants,
        (one) => fitting(zone, one, type, mode),
        (t) => arena.add(t),
        draws,
      );
    else if (type === T.ANY && anyShares)
      slots[at + slot] = slots[at + SLOTS[node.rrsets.keys().next().value!]!]!;
    else if (type === T.ANY || chases || node.rrsets.has(type))
      slots[at + slot] = arena.add(fitting(zone, node, type, mode));
    else slots[at + slot] = nodata;
  });
}
