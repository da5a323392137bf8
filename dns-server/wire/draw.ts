// A weighted answer (a traffic policy's variants, ADR 0209): one template per
// variant, and a draw group whose entries repeat each variant's offset in
// proportion to its weight, so that a query's draw is one random index (ANY at
// the name answers the union, as RFC 8482 lets it answer any subset). The same
// for unsigned and signed answers (served.ts, signed.ts), each with its own
// template.
import { drawTable } from '../zone/policy.js';
import type { ZoneNode } from '../zone/zone.js';
import type { Template } from './template.js';

/**
 * A slot at or above this is no arena offset but DRAW + the index of a draw group in
 * ServedData.draws: the group's length, then that many arena offsets, one of which a query takes
 * at random.
 */
export const DRAW = 0x80000000;

type RRsetData = NonNullable<ReturnType<ZoneNode['rrsets']['get']>>['data'];

/**
 * @param template the answer's template at a node holding the one variant
 * @param add writes a template to the arena, returns its offset
 * @param draws the draw groups, appended to
 * @returns the slot's value: DRAW + the group's index
 */
export function encodeDraw(
  node: ZoneNode,
  type: number,
  variants: { data: RRsetData; weight: number }[],
  template: (one: ZoneNode) => Template,
  add: (t: Template) => number,
  draws: number[],
): number {
  const rrset = node.rrsets.get(type)!;
  const offsets = variants.map((v) => {
    const one: ZoneNode = {
      ...node,
      rrsets: new Map([[type, { ...rrset, data: v.data, variants: undefined }]]),
    };
    return add(template(one));
  });
  const table = drawTable(variants.map((v) => v.weight));
  const group = draws.length;
  draws.push(table.length);
  for (const i of table) draws.push(offsets[i]!);
  return DRAW + group;
}
