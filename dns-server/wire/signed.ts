// The DO=1 answers of a signed zone (ADR 0106), encoded beside the DO=0 ones
// and in the same layout: for each name, an arena offset per query-type slot.
// What depends on the query name alone (the NSEC that covers a name that does
// not exist) is one piece per NSEC of the chain, also encoded here; the
// responder picks it by a binary search over the chain's canonical keys.
import type { SignedZone } from '../dnssec/signed-zone.js';
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
  /** The NSEC chain's names by rank as ../dnssec/wire.ts canonicalLabels, back to back. */
  canonical: Uint8Array;
  /** Where rank r's name is in `canonical`: [canonicalAt[r], canonicalAt[r + 1]). */
  canonicalAt: Uint32Array;
  /** Arena offset of each NSEC (and its RRSIG) by chain rank, as a template of two authority records. */
  proofs: Uint32Array;
  /** For name i, the chain rank of the NSEC that covers "*.<name i>" (NXDOMAIN below name i). */
  wildcardCover: Uint32Array;
  /** For name i, the chain rank of its own NSEC (NO_RANK for an empty non-terminal). */
  ownRank: Uint32Array;
}

export const NO_RANK = 0xffffffff;

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
  const canonicalAt = new Uint32Array(signed.chain.keys.length + 1);
  signed.chain.keys.forEach((k, r) => (canonicalAt[r + 1] = canonicalAt[r]! + k.length));
  const canonical = new Uint8Array(canonicalAt[signed.chain.keys.length]!);
  signed.chain.keys.forEach((k, r) => canonical.set(k, canonicalAt[r]!));
  return { slots, nxdomain, canonical, canonicalAt, proofs, wildcardCover, ownRank };
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
