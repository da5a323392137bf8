// The journal of a zone's differences for IXFR (RFC 1995): one entry per serial
// change, the records deleted and added, bounded by octets (the oldest go
// first, as Knot's journal-max-usage). A client whose serial is in it gets the
// differences condensed into one (RFC 1995 section 5 allows it); one whose
// serial is not gets the whole zone. Pure.
import { recordAt, recordCount, type TransferImage } from './image.js';

export interface Difference {
  fromSerial: number;
  toSerial: number;
  /** SOA records (wire form) at the two serials. */
  fromSoa: Uint8Array;
  toSoa: Uint8Array;
  deleted: Buffer[];
  added: Buffer[];
}

function octetsOf(d: Difference): number {
  let n = d.fromSoa.length + d.toSoa.length;
  for (const r of d.deleted) n += r.length;
  for (const r of d.added) n += r.length;
  return n;
}

/** The differences between two images of one zone. */
export function differenceOf(before: TransferImage, after: TransferImage): Difference {
  const key = (b: Buffer) => b.toString('latin1');
  const old = new Map<string, Buffer>();
  for (let i = 0; i < recordCount(before); i++) {
    const r = recordAt(before, i);
    old.set(key(r), r);
  }
  const added: Buffer[] = [];
  for (let i = 0; i < recordCount(after); i++) {
    const r = recordAt(after, i);
    if (!old.delete(key(r))) added.push(Buffer.from(r));
  }
  return {
    fromSerial: before.serial,
    toSerial: after.serial,
    fromSoa: before.soa,
    toSoa: after.soa,
    // Copies: the journal must not pin the whole image a record was cut from.
    deleted: [...old.values()].map((r) => Buffer.from(r)),
    added,
  };
}

export class Journal {
  private readonly entries: Difference[] = [];
  private octets = 0;

  /** @param maxOctets 0: no journal, every IXFR is answered with the whole zone */
  constructor(readonly maxOctets: number) {}

  get size(): number {
    return this.octets;
  }

  get length(): number {
    return this.entries.length;
  }

  add(d: Difference): void {
    if (this.maxOctets <= 0) return;
    const last = this.entries.at(-1);
    // A gap (a build this journal did not see) breaks the chain: what came before cannot be followed.
    if (last && last.toSerial !== d.fromSerial) this.clear();
    this.entries.push(d);
    this.octets += octetsOf(d);
    while (this.octets > this.maxOctets && this.entries.length > 0)
      this.octets -= octetsOf(this.entries.shift()!);
  }

  clear(): void {
    this.entries.length = 0;
    this.octets = 0;
  }

  /**
   * The differences from `serial` to the newest, condensed into one (a record added then deleted
   * is in neither list); undefined when the journal does not reach back to `serial`.
   */
  since(serial: number): Difference | undefined {
    const first = this.entries.findIndex((d) => d.fromSerial === serial);
    if (first < 0) return undefined;
    const deleted = new Map<string, Buffer>();
    const added = new Map<string, Buffer>();
    for (const d of this.entries.slice(first)) {
      for (const r of d.deleted) {
        const k = r.toString('latin1');
        if (!added.delete(k)) deleted.set(k, r);
      }
      for (const r of d.added) {
        const k = r.toString('latin1');
        if (!deleted.delete(k)) added.set(k, r);
      }
    }
    const last = this.entries.at(-1)!;
    return {
      fromSerial: serial,
      toSerial: last.toSerial,
      fromSoa: this.entries[first]!.fromSoa,
      toSoa: last.toSoa,
      deleted: [...deleted.values()],
      added: [...added.values()],
    };
  }
}
