import { differenceOf, Journal } from './journal.js';
import type { TransferImage } from './image.js';

function image(serial: number, records: string[]): TransferImage {
  const wires = records.map((r) => Buffer.from(r));
  const offsets = new Uint32Array(wires.length + 1);
  let total = 0;
  wires.forEach((w, i) => {
    offsets[i] = total;
    total += w.length;
  });
  offsets[wires.length] = total;
  return {
    zone: 'z',
    serial,
    config: { secondaries: [], keyName: 'k' },
    soa: Buffer.from(`soa${serial}`),
    records: Buffer.concat(wires),
    offsets,
  };
}

const text = (bs: Buffer[]) => bs.map((b) => b.toString()).sort();

describe('IXFR journal (RFC 1995)', () => {
  it('keeps the differences and condenses them from any serial it holds', () => {
    const j = new Journal(1 << 20);
    const i1 = image(1, ['a', 'b']);
    const i2 = image(2, ['a', 'c']);
    const i3 = image(3, ['b', 'c', 'd']);
    j.add(differenceOf(i1, i2));
    j.add(differenceOf(i2, i3));
    const from1 = j.since(1)!;
    // b deleted then added again is in neither list; a deleted; c and d added.
    expect([text(from1.deleted), text(from1.added)]).toEqual([['a'], ['c', 'd']]);
    expect([from1.fromSerial, from1.toSerial, from1.fromSoa.toString(), from1.toSoa.toString()]).toEqual([
      1,
      3,
      'soa1',
      'soa3',
    ]);
    const from2 = j.since(2)!;
    expect([text(from2.deleted), text(from2.added)]).toEqual([['a'], ['b', 'd']]);
    expect(j.since(7)).toBeUndefined();
  });

  it('is bounded by octets, the oldest going first; 0 keeps nothing; a gap starts it again', () => {
    const j = new Journal(40);
    let prev = image(1, ['x'.repeat(5)]);
    for (let s = 2; s <= 6; s++) {
      const next = image(s, [String(s).repeat(5)]);
      j.add(differenceOf(prev, next));
      prev = next;
    }
    expect(j.size).toBeLessThanOrEqual(40);
    expect(j.since(1)).toBeUndefined();
    expect(j.since(5)).toBeDefined();
    const none = new Journal(0);
    none.add(differenceOf(image(1, ['a']), image(2, ['b'])));
    expect(none.length).toBe(0);
    j.add(differenceOf(image(10, ['a']), image(11, ['b'])));
    expect([j.length, j.since(5)]).toEqual([1, undefined]);
  });
});
