import { hash32, ownerOf, shardOfNamespace, shardsOf } from './assignment.js';

const members = (n: number) => Array.from({ length: n }, (_, i) => `capi-dns-controller-${i}`);

describe('shard assignment', () => {
  it('gives every shard exactly one owner, the same whatever order the members are listed in', () => {
    const three = members(3);
    for (let shard = 0; shard < 32; shard++) {
      expect(ownerOf(shard, three)).toBe(ownerOf(shard, [...three].reverse()));
      expect(three).toContain(ownerOf(shard, three));
    }
    const all = three.flatMap((m) => shardsOf(m, three, 32));
    expect(all.sort((a, b) => a - b)).toEqual(Array.from({ length: 32 }, (_, i) => i));
    expect(ownerOf(0, [])).toBeUndefined();
  });

  it('moves only the shards a joining member takes, and only a leaving member’s shards', () => {
    const before = members(3);
    const after = members(4);
    let moved = 0;
    for (let shard = 0; shard < 64; shard++) {
      const was = ownerOf(shard, before);
      const is = ownerOf(shard, after);
      if (was !== is) {
        expect(is).toBe(after[3]);
        moved++;
      }
    }
    // About a quarter: the new member's share, nothing shuffled among the others.
    expect(moved).toBeGreaterThan(64 / 4 / 2);
    expect(moved).toBeLessThan((64 / 4) * 2);
    for (let shard = 0; shard < 64; shard++)
      if (ownerOf(shard, after) !== after[3]) expect(ownerOf(shard, before)).toBe(ownerOf(shard, after));
  });

  it('spreads shards and namespaces evenly enough', () => {
    const three = members(3);
    for (const m of three) {
      const share = shardsOf(m, three, 64).length;
      expect(share).toBeGreaterThan(64 / 3 / 2);
      expect(share).toBeLessThan((64 / 3) * 1.6);
    }
    const counts = new Array<number>(32).fill(0);
    for (let i = 0; i < 3200; i++) counts[shardOfNamespace(`team-${i}`, 32)]!++;
    expect(Math.min(...counts)).toBeGreaterThan(60);
    expect(Math.max(...counts)).toBeLessThan(140);
  });

  it('hashes to unsigned 32-bit values that differ for near keys', () => {
    expect(hash32('a')).toBeGreaterThanOrEqual(0);
    expect(hash32('a')).toBeLessThan(2 ** 32);
    expect(hash32('c001')).not.toBe(hash32('c002'));
    expect(hash32('')).toBe(hash32(''));
  });
});
