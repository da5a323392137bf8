// One authoritative zone in memory and the RFC lookup over it: exact match,
// wildcard synthesis (RFC 4592), CNAME chasing inside the zone (RFC 1034
// section 4.3.2), NODATA and NXDOMAIN with the SOA for negative caching
// (RFC 2308). Pure: no I/O, no wire format.
import { isInZone } from './name.js';
import { T, type RR, type RRset } from './rr.js';
import { closestMatch, type WildcardsByEncloser } from './wildcard.js';

export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;

/** A name that exists in the zone. An empty non-terminal has no RRsets (RFC 8020: it still exists). */
export interface ZoneNode {
  name: string;
  /** By type, in the order they are answered for ANY. */
  rrsets: Map<number, RRset>;
  /** "*.<encloser>": its answers are synthesised for other names (RFC 4592). */
  wildcard: boolean;
  /** A zone cut: its NS RRset delegates it and every name below (ADR 0215). */
  cut?: boolean;
}

export type Match =
  | { kind: 'exact'; node: ZoneNode }
  /** RFC 4592 section 3.3.1: no node at qname, but "*.<closest encloser>" exists. */
  | { kind: 'wildcard'; node: ZoneNode }
  | { kind: 'nxdomain' };

export interface Answer {
  rcode: number;
  answer: RR[];
  authority: RR[];
  /** false for a referral (RFC 1034 section 4.3.2 step 3b: no AA); authoritative otherwise. */
  authoritative?: boolean;
}

/** CNAME chains longer than this are answered as far as they go (BIND and NSD stop early too). */
const MAX_CNAME_CHAIN = 8;

export class Zone {
  private readonly wildcards: WildcardsByEncloser<ZoneNode> = {
    get: (encloser) => this.nodes.get(encloser === '' ? '*' : `*.${encloser}`),
  };

  /**
   * @param name the apex, normalised
   * @param nodes every existing name of the zone, apex and empty non-terminals included
   */
  constructor(
    readonly name: string,
    readonly nodes: Map<string, ZoneNode>,
    readonly soa: RRset,
  ) {}

  /** The SOA as it goes into the authority section of a negative answer (RFC 2308 section 3). */
  negativeSoa(): RR {
    const data = this.soa.data[0]!;
    const minimum = data.kind === 'soa' ? data.minimum : this.soa.ttl;
    return { owner: this.name, type: T.SOA, ttl: Math.min(this.soa.ttl, minimum), data };
  }

  /** Finds what answers `qname` (normalised, inside this zone): RFC 4592 section 3.3.1's closest encloser walk. */
  find(qname: string): Match {
    const node = closestMatch(this.nodes, this.wildcards, qname);
    if (node === undefined) return { kind: 'nxdomain' };
    // Asked for by name, "*.<encloser>" is an exact match, not special (RFC 4592 section 2.3.1).
    return { kind: node.name === qname ? 'exact' : 'wildcard', node };
  }

  /** The full answer to (qname, qtype), owner names as the zone stores them (lower case). */
  lookup(qname: string, qtype: number): Answer {
    const cut = this.cutAbove(qname);
    if (cut) return referral(cut);
    return this.answerFor(this.find(qname), qname, qtype);
  }

  /**
   * The zone cut at or above `qname`, if any (RFC 1034 section 4.3.2 step 3b). DS at the cut gets
   * the referral too until zones are signed (issue 44 answers it from the parent, RFC 4035 section
   * 3.1.4.1).
   */
  cutAbove(qname: string): ZoneNode | undefined {
    for (let name = qname; name.length > this.name.length; name = name.slice(name.indexOf('.') + 1))
      if (this.nodes.get(name)?.cut) return this.nodes.get(name);
    return undefined;
  }

  /**
   * The answer for a match, with `owner` as the owner name of the records at the match
   * (the query name; for wildcards that is the synthesised owner, RFC 4592 section 3.3.1).
   */
  answerFor(match: Match, owner: string, qtype: number, chain: Set<string> = new Set()): Answer {
    if (match.kind === 'nxdomain')
      return { rcode: RCODE.NXDOMAIN, answer: [], authority: [this.negativeSoa()] };
    const { rrsets } = match.node;
    if (match.node.cut) return referral(match.node);
    if (qtype === T.ANY) {
      const answer = [...rrsets.values()].flatMap((set) => records(set, owner));
      return answer.length > 0 ? positive(answer) : this.nodata();
    }
    const exact = rrsets.get(qtype);
    if (exact) return positive(records(exact, owner));
    const cname = rrsets.get(T.CNAME);
    if (cname) return this.chase(cname, owner, qtype, chain);
    return this.nodata();
  }

  private nodata(): Answer {
    return { rcode: RCODE.NOERROR, answer: [], authority: [this.negativeSoa()] };
  }

  /** RFC 1034 section 4.3.2 step 3a: answer the CNAME, then restart at its target if this zone holds it. */
  private chase(cname: RRset, owner: string, qtype: number, chain: Set<string>): Answer {
    const answer = records(cname, owner);
    const first = cname.data[0];
    const target = first?.kind === 'name' ? first.target : undefined;
    if (
      target === undefined ||
      !isInZone(target, this.name) ||
      chain.has(target) ||
      // Below a cut the target is another server's: the resolver follows it from there.
      this.cutAbove(target) !== undefined ||
      chain.size >= MAX_CNAME_CHAIN
    )
      return positive(answer);
    chain.add(owner);
    // RFC 6604 section 2.1: the RCODE is that of the last name of the chain.
    const rest = this.answerFor(this.find(target), target, qtype, chain);
    return { rcode: rest.rcode, answer: [...answer, ...rest.answer], authority: rest.authority };
  }
}

/** A referral to the name servers of a cut: no answer, their NS RRset in the authority section, no AA. */
function referral(cut: ZoneNode): Answer {
  const ns = cut.rrsets.get(T.NS);
  return {
    rcode: RCODE.NOERROR,
    answer: [],
    authority: ns ? records(ns, cut.name) : [],
    authoritative: false,
  };
}

function positive(answer: RR[]): Answer {
  return { rcode: RCODE.NOERROR, answer, authority: [] };
}

function records(set: RRset, owner: string): RR[] {
  return set.data.map((data) => ({ owner, type: set.type, ttl: set.ttl, data }));
}
