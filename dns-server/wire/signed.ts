// The DO=1 answers of a signed zone (ADR 0106), encoded beside the DO=0 ones
// and in the same layout: for each name, an arena offset per query-type slot.
// What depends on the query name alone (the NSEC that covers a name that does
// not exist) is one piece per NSEC of the chain, also encoded here; the
// responder picks it by the one label of the name below its closest encloser
// (coverBelow).
import type { SignedZone } from '../dnssec/signed-zone.js';
import { canonicalLabels, compareCanonical } from '../dnssec/wire.js';
import { parentName } from '../zone/name.js';
import { T } from '../zone/rr.js';
import { RCODE, type Answer, type ZoneNode } from '../zone/zone.js';
import { encodeTemplate, type Template } from './template.js';
import { fittingTemplate } from './fitting.js';
import { encodeDraw } from './draw.js';

export interface SignedZoneData {
  /** As ServedZoneData.slots, in the order of the zone's name table: the signed answer per name and slot. */
  slots: Uint32Array;
  /** The signed NXDOMAIN (SOA and its RRSIG); the query's NSECs are added per query. */
  nxdomain: number;
  /** Which NSEC covers a name below each name of the zone: see CoverBelow. */
  cover: CoverBelow;
  /** Arena offset of each NSEC (and its RRSIG) by chain rank, as a template of two authority records. */
  proofs: Uint32Array;
  /** For name i, the chain rank of the NSEC that covers "*.<name i>" (NXDOMAIN below name i). */
  wildcardCover: Uint32Array;
  /** For name i, the chain rank of its own NSEC (NO_RANK for an empty non-terminal). */
  ownRank: Uint32Array;
}

export const NO_RANK = 0xffffffff;

/**
 * For a name that does not exist, the NSEC that covers it (RFC 4035 section 3.1.3.2) is decided by
 * its closest encloser E and the one label L of the name right below E: every name of the zone
 * below E starts, below E, with a label of one of E's children, none L (else that child would be
 * the encloser). In canonical order (RFC 4034 section 6.1) E's subtree follows E, child by child:
 * the covering NSEC is the last of the subtree of the greatest child label below L, or, when L
 * sorts before them all, E's own (or, for an empty non-terminal, the one that covers E).
 * The responder compares L with E's child labels alone, never whole names.
 */
export interface CoverBelow {
  /** Name i's children are [childrenOf[i], childrenOf[i + 1]) of the arrays below, in canonical order of their labels. */
  childrenOf: Uint32Array;
  /** Each child's own label (length octet, then its octets in lower case), back to back. */
  labels: Uint8Array;
  /** Where child j's label is in `labels`. */
  labelAt: Uint32Array;
  /** The chain rank of the last NSEC up to the end of child j's subtree: what covers a label after j's. */
  last: Uint32Array;
  /** For name i, the chain rank that covers a name below it sorting before all its children. */
  before: Uint32Array;
}

type Add = (t: Template) => number;

export function encodeSignedZone(
  signed: SignedZone,
  slotTypes: readonly number[],
  add: Add,
  draws: number[],
): SignedZoneData {
  const zone = signed.zone;
  const negative = zone.negativeSoa();
  const proofs = Uint32Array.from(signed.chain.names, (_, rank) =>
    add({
      rcode: 0,
      answerCount: 0,
      authorityCount: 2,
      sections: signed.proofPiece(rank),
      baseLength: 0,
      movable: undefined,
    }),
  );
  const nxdomain = add(
    signedTemplate(
      signed,
      zone.name,
      { rcode: RCODE.NXDOMAIN, answer: [], authority: [negative] },
      undefined,
      'suffix',
    ),
  );
  const count = slotTypes.length;
  const slots = new Uint32Array(zone.nodes.size * count);
  const wildcardCover = new Uint32Array(zone.nodes.size);
  const ownRank = new Uint32Array(zone.nodes.size);
  let i = 0;
  for (const [name, node] of zone.nodes) {
    wildcardCover[i] = signed.chain.covering(name === '' ? '*' : `*.${name}`);
    ownRank[i] = signed.chain.rankOf(name) ?? NO_RANK;
    const mode = node.wildcard ? 'wildcard' : 'no';
    let nodata: number | undefined;
    const nodataAt = (): number =>
      (nodata ??= add(
        signedTemplate(signed, name, { rcode: RCODE.NOERROR, answer: [], authority: [negative] }, name, mode),
      ));
    const chases = node.rrsets.has(T.CNAME);
    slotTypes.forEach((type, slot) => {
      const at = i * count + slot;
      const variants = type !== T.ANY && !chases ? node.rrsets.get(type)?.variants : undefined;
      if (variants)
        slots[at] = encodeDraw(
          node,
          type,
          variants,
          (one) => fittingSigned(signed, one, type, mode),
          add,
          draws,
        );
      else if (node.rrsets.size > 0 && (type === T.ANY || chases || node.rrsets.has(type)))
        slots[at] = add(fittingSigned(signed, node, type, mode));
      else slots[at] = nodataAt();
    });
    i++;
  }
  return { slots, nxdomain, cover: coverBelow(signed, ownRank), proofs, wildcardCover, ownRank };
}

/** CoverBelow of the zone, its names in the name table's order (the zone's). */
function coverBelow(signed: SignedZone, ownRank: Uint32Array): CoverBelow {
  const names = [...signed.zone.nodes.keys()];
  const index = new Map(names.map((n, i) => [n, i]));
  const keys = names.map((n) => canonicalLabels(n));
  const apex = index.get(signed.zone.name)!;
  // A zone holds every ancestor of its names down to the apex (empty non-terminals included).
  const parent = names.map((n, i) => (i === apex ? -1 : index.get(parentName(n))!));
  const children: number[][] = names.map(() => []);
  parent.forEach((p, i) => p >= 0 && children[p]!.push(i));
  // Subtrees are contiguous in canonical order: the last NSEC of one is the greatest rank in it.
  const greatest = Int32Array.from(ownRank, (r) => (r === NO_RANK ? -1 : r));
  for (let i = 0; i < names.length; i++)
    for (let a = parent[i]!; a >= 0 && greatest[i]! >= 0; a = parent[a]!)
      if (greatest[i]! > greatest[a]!) greatest[a] = greatest[i]!;
  const before = Uint32Array.from(names, (n, i) =>
    ownRank[i] !== NO_RANK ? ownRank[i]! : signed.chain.covering(n),
  );
  const childrenOf = new Uint32Array(names.length + 1);
  const order: number[] = [];
  const last: number[] = [];
  children.forEach((c, i) => {
    c.sort((x, y) => compareCanonical(keys[x]!, keys[y]!));
    // What covers a name after child c: the last NSEC of the subtrees up to c's.
    let covering = before[i]!;
    for (const child of c) last.push((covering = greatest[child]! >= 0 ? greatest[child]! : covering));
    order.push(...c);
    childrenOf[i + 1] = childrenOf[i]! + c.length;
  });
  const labelAt = new Uint32Array(order.length + 1);
  order.forEach((c, j) => (labelAt[j + 1] = labelAt[j]! + keys[c]!.length - keys[parent[c]!]!.length));
  const labels = new Uint8Array(labelAt[order.length]!);
  order.forEach((c, j) => labels.set(keys[c]!.subarray(keys[parent[c]!]!.length), labelAt[j]!));
  return {
    childrenOf,
    labels,
    labelAt,
    last: Uint32Array.from(last),
    before,
  };
}

function signedTemplate(
  signed: SignedZone,
  base: string,
  answer: Answer,
  denied: string | undefined,
  mode: 'no' | 'suffix' | 'wildcard',
): Template {
  const { answer: withSigs, proofs } = signed.sign(answer, denied);
  const t = encodeTemplate(base, withSigs, mode);
  if (proofs.length === 0) return t;
  return {
    ...t,
    sections: Buffer.concat([t.sections, ...proofs.map((rank) => signed.proofPiece(rank))]),
    authorityCount: t.authorityCount + 2 * proofs.length,
  };
}

/** As served.ts `fitting`, signed (fitting.ts). */
function fittingSigned(signed: SignedZone, node: ZoneNode, type: number, mode: 'no' | 'wildcard'): Template {
  return fittingTemplate(node, type, mode, (t) =>
    signedTemplate(
      signed,
      node.name,
      signed.zone.answerFor({ kind: 'exact', node }, node.name, t),
      node.name,
      mode,
    ),
  );
}
