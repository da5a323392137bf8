// The answer's template, if it fits a DNS message over TCP. Each RRset does
// (the build skips one that does not), but ANY gathers every RRset at a name,
// and a CNAME chain several names: ANY then answers with the first RRset alone
// (RFC 8482 section 4.1 lets it answer a subset), a chain gets SERVFAIL. The
// same rule for unsigned and signed answers (served.ts, signed.ts).
import { MAX_ANSWER_OCTETS } from '../../api/index.js';
import { T } from '../zone/rr.js';
import { RCODE, type ZoneNode } from '../zone/zone.js';
import { encodeTemplate, type Template } from './template.js';

/** @param encode the template of the node's answer to a query type */
export function fittingTemplate(
  node: ZoneNode,
  type: number,
  mode: 'no' | 'wildcard',
  encode: (type: number) => Template,
): Template {
  const full = encode(type);
  if (full.sections.length <= MAX_ANSWER_OCTETS) return full;
  if (type === T.ANY) {
    const [first] = node.rrsets.keys();
    if (first !== undefined && first !== T.CNAME) return fittingTemplate(node, first, mode, encode);
  }
  return encodeTemplate(node.name, { rcode: RCODE.SERVFAIL, answer: [], authority: [] }, mode);
}
