import { HUGE_PAGES_FROM, placeArena } from './arena-memory.js';

describe('placeArena', () => {
  it('copies a large arena onto memory advised for huge pages, whole and alone in what it owns', () => {
    const octets = Uint8Array.from({ length: HUGE_PAGES_FROM + 12345 }, (_, i) => (i * 7) & 0xff);
    const { arena, pages } = placeArena(octets);
    expect(pages).toBe(process.platform === 'linux' ? 'advised' : expect.stringMatching(/^not advised: /));
    expect(Buffer.from(arena).equals(Buffer.from(octets))).toBe(true);
    expect(arena.buffer).not.toBe(octets.buffer);
  });

  it('copies a small arena onto ordinary memory', () => {
    const octets = Uint8Array.of(1, 2, 3);
    const { arena, pages } = placeArena(octets);
    expect(pages).toBe('small');
    expect([...arena]).toEqual([1, 2, 3]);
    expect(arena.buffer.byteLength).toBe(3);
  });
});
