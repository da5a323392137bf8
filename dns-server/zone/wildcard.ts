// RFC 4592 section 3.3.1 over name strings: the zone's lookup (zone.ts) finds
// what answers a name through closestMatch. The wire layer's hot path walks
// the same way over the query's wire bytes (wire/name-table.ts, which makes
// no string), and is held to this one by wire/name-table.test.ts and the
// lookup table run on the wire (wire/lookup.test.ts).
import { parentName } from './name.js';

/**
 * Wildcard names by the name they stand under: "*.<encloser>" found by <encloser> ("" for "*").
 */
export interface WildcardsByEncloser<N> {
  get(encloser: string): N | undefined;
}

/**
 * What answers `qname`: the node at qname; else the source of synthesis, the wildcard child of the
 * closest encloser (the nearest existing ancestor, empty non-terminals included, RFC 4592 section
 * 3.3.1); else undefined (NXDOMAIN). A name that exists blocks the wildcard, also below itself
 * (section 2.2.1), because the walk stops at the first ancestor that exists.
 *
 * @param nodes every existing name of the zone, the apex included (where the walk ends)
 * @param qname normalised, at or below the apex
 */
export function closestMatch<N>(
  nodes: ReadonlyMap<string, N>,
  wildcards: WildcardsByEncloser<N>,
  qname: string,
): N | undefined {
  const node = nodes.get(qname);
  if (node !== undefined) return node;
  let encloser = parentName(qname);
  while (!nodes.has(encloser)) encloser = parentName(encloser);
  return wildcards.get(encloser);
}
