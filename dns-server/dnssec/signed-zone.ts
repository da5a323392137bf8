// One zone view signed, when it is compiled (ADR 0106): the DNSKEY at the
// apex, an NSEC at every name with data, and the RRSIGs and denial proofs
// that go with any answer the zone's lookup gives. Pure apart from the
// signing itself; the wire layer (../wire/served.ts) encodes what this returns
// next to the unsigned answers.
import { parentName } from '../zone/name.js';
import type { RData, RR, RRset } from '../zone/rr.js';
import { RCODE, type Answer, type Zone } from '../zone/zone.js';
import type { ZoneKey } from './key.js';
import { NsecChain, nsecRdata } from './nsec.js';
import type { SignatureCache } from './rrsig.js';
import { DNSSEC_T, recordWire } from './wire.js';

const SOA = 6;
const CNAME = 5;

/** An answer with its RRSIGs, and the NSEC chain ranks whose NSEC and RRSIG go in its authority section. */
export interface SignedAnswer {
  answer: Answer;
  proofs: number[];
}

export class SignedZone {
  readonly chain: NsecChain;
  /** Negative TTL (RFC 2308 section 5, RFC 9077): the NSEC records' TTL. */
  private readonly nsecTtl: number;
  private readonly pieces = new Map<number, Buffer>();
  /**
   * The RRSIG RDATA of each whole RRset of the zone, once signed: an RRset is in several answers
   * (its type's, ANY's; the SOA in every NODATA), and each would look its signature up again.
   */
  private readonly setSignatures = new Map<RRset, Buffer>();

  /**
   * Adds the DNSKEY RRset at the apex and an NSEC RRset at every name with data to `zone`, so that
   * the zone's own lookup answers DNSKEY, NSEC and ANY queries like any other data.
   */
  constructor(
    readonly zone: Zone,
    readonly key: ZoneKey,
    private readonly signatures: SignatureCache,
    private readonly now: number,
  ) {
    const apex = zone.nodes.get(zone.name)!;
    apex.rrsets.set(DNSSEC_T.DNSKEY, {
      name: zone.name,
      type: DNSSEC_T.DNSKEY,
      ttl: zone.soa.ttl,
      data: [{ kind: 'bytes', bytes: key.dnskey }],
    });
    this.chain = new NsecChain(zone);
    this.nsecTtl = zone.negativeSoa().ttl;
    this.chain.names.forEach((name, rank) => {
      const node = zone.nodes.get(name)!;
      const rdata = nsecRdata(this.chain.next(rank), [...node.rrsets.keys()]);
      node.rrsets.set(DNSSEC_T.NSEC, {
        name,
        type: DNSSEC_T.NSEC,
        ttl: this.nsecTtl,
        data: [{ kind: 'bytes', bytes: rdata }],
      });
    });
  }

  /**
   * The answer with an RRSIG after each RRset, and the proofs it needs (RFC 4035 section 3.1.3).
   * @param denied the name an answer without records is about, when known at build time (a node's
   *   own name); undefined for the zone's NXDOMAIN, whose proofs depend on the query name
   */
  sign(answer: Answer, denied: string | undefined): SignedAnswer {
    const proofs = new Set<number>();
    const out: RR[] = [];
    for (const group of rrsetsOf(answer.answer)) {
      const owner = group[0]!.owner;
      const source = this.sourceOf(owner);
      // RFC 4035 section 3.1.3.3: a wildcard answer proves that no closer name exists.
      if (source !== owner) proofs.add(this.chain.covering(owner));
      out.push(...group, this.rrsigRecord(group, source));
    }
    const authority: RR[] = [];
    for (const group of rrsetsOf(answer.authority))
      authority.push(...group, this.rrsigRecord(group, group[0]!.owner));
    if (answer.authority.some((rr) => rr.type === SOA)) {
      const last = answer.answer[answer.answer.length - 1];
      const name = last?.type === CNAME && last.data.kind === 'name' ? last.data.target : denied;
      if (name !== undefined) for (const p of this.denialOf(name, answer.rcode)) proofs.add(p);
    }
    return { answer: { rcode: answer.rcode, answer: out, authority }, proofs: [...proofs] };
  }

  /** RFC 4035 sections 3.1.3.1–3.1.3.4: which NSECs deny `name` (or its type). */
  denialOf(name: string, rcode: number): number[] {
    if (rcode === RCODE.NXDOMAIN) {
      let encloser = parentName(name);
      while (!this.zone.nodes.has(encloser)) encloser = parentName(encloser);
      return [this.chain.covering(name), this.chain.covering(wildcardOf(encloser))];
    }
    const own = this.chain.rankOf(name);
    if (own !== undefined) return [own];
    if (this.zone.nodes.has(name)) return [this.chain.covering(name)]; // an empty non-terminal
    // No data of the type at a wildcard that stands for `name`: its NSEC, and no closer name.
    const match = this.zone.find(name);
    const wildcard = match.kind === 'nxdomain' ? undefined : this.chain.rankOf(match.node.name);
    return [...(wildcard !== undefined ? [wildcard] : []), this.chain.covering(name)];
  }

  /** The NSEC of `rank` and its RRSIG, uncompressed: appended to authority sections as they are. */
  proofPiece(rank: number): Buffer {
    let piece = this.pieces.get(rank);
    if (piece) return piece;
    const name = this.chain.names[rank]!;
    const nsec = this.zone.nodes.get(name)!.rrsets.get(DNSSEC_T.NSEC)!;
    const rrsig = this.rrsig(name, nsec.type, nsec.ttl, nsec.data);
    // The same signature as a build before signs the same NSEC (owner, TTL, RDATA): its piece too.
    piece = encodedProofs.get(rrsig);
    if (!piece) {
      const rdata = (nsec.data[0] as { bytes: Uint8Array }).bytes;
      piece = Buffer.concat([
        recordWire(name, DNSSEC_T.NSEC, this.nsecTtl, rdata),
        recordWire(name, DNSSEC_T.RRSIG, this.nsecTtl, rrsig),
      ]);
      encodedProofs.set(rrsig, piece);
    }
    this.pieces.set(rank, piece);
    return piece;
  }

  /** Every RRset of the zone and its RRSIG, in canonical order of owners: what a zone file or AXFR holds. */
  *records(): Generator<RR> {
    const names = [...this.zone.nodes.keys()];
    for (const name of this.chain.names.concat(names.filter((n) => this.chain.rankOf(n) === undefined))) {
      for (const set of this.zone.nodes.get(name)!.rrsets.values()) {
        const rrs = set.data.map((data) => ({ owner: name, type: set.type, ttl: set.ttl, data }));
        yield* rrs;
        yield this.rrsigRecord(rrs, name);
      }
    }
  }

  /** Where the records of `owner` come from: itself, or the wildcard that stands for it. */
  private sourceOf(owner: string): string {
    if (this.zone.nodes.has(owner)) return owner;
    const match = this.zone.find(owner);
    return match.kind === 'nxdomain' ? owner : match.node.name;
  }

  private rrsigRecord(group: RR[], source: string): RR {
    const first = group[0]!;
    const set: RRset | undefined = this.zone.nodes.get(source)?.rrsets.get(first.type);
    const whole = set !== undefined && isWhole(group, set);
    let rdata = whole ? this.setSignatures.get(set) : undefined;
    if (!rdata) {
      rdata = this.rrsig(
        source,
        first.type,
        set?.ttl ?? first.ttl,
        group.map((rr) => rr.data),
      );
      if (whole) this.setSignatures.set(set, rdata);
    }
    return {
      owner: first.owner,
      type: DNSSEC_T.RRSIG,
      ttl: first.ttl,
      data: { kind: 'bytes', bytes: rdata },
    };
  }

  private rrsig(owner: string, type: number, ttl: number, data: readonly RData[]): Buffer {
    return this.signatures.rrsig(this.key, this.zone.name, owner, type, ttl, data, this.now);
  }
}

/**
 * The NSEC and RRSIG records of a proof (SignedZone.proofPiece) by the RRSIG RDATA they hold: kept
 * by the signature cache's entry, and so between builds, while that signature is used.
 */
const encodedProofs = new WeakMap<Buffer, Buffer>();

/** `group` holds the records of `set`, all of them (not a weighted variant's share). */
function isWhole(group: readonly RR[], set: RRset): boolean {
  if (group.length !== set.data.length) return false;
  for (let i = 0; i < group.length; i++) if (group[i]!.data !== set.data[i]) return false;
  return true;
}

function wildcardOf(encloser: string): string {
  return encloser === '' ? '*' : `*.${encloser}`;
}

/** Consecutive records of one owner and type: the RRsets of a section as the lookup lists them. */
function rrsetsOf(records: readonly RR[]): RR[][] {
  const out: RR[][] = [];
  for (const rr of records) {
    const last = out[out.length - 1];
    if (last && last[0]!.owner === rr.owner && last[0]!.type === rr.type) last.push(rr);
    else out.push([rr]);
  }
  return out;
}
