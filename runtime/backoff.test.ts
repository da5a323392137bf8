import { Backoff, jittered } from './backoff.js';

describe('Backoff', () => {
  it('doubles from minMs up to maxMs, and starts over after reset', () => {
    const b = new Backoff({ minMs: 250, maxMs: 5_000 });
    const waits = Array.from({ length: 8 }, () => b.next());
    expect(waits).toEqual([250, 500, 1_000, 2_000, 4_000, 5_000, 5_000, 5_000]);
    b.reset();
    expect(b.next()).toBe(250);
  });

  it('spreads each wait by the jitter fraction', () => {
    let r = 0;
    const b = new Backoff({ minMs: 1_000, maxMs: 1_000, jitter: 0.2 }, () => r);
    expect(b.next()).toBeCloseTo(800);
    r = 1;
    expect(b.next()).toBeCloseTo(1_200);
    r = 0.5;
    expect(b.next()).toBeCloseTo(1_000);
  });

  it('stays finite after very many failures', () => {
    const b = new Backoff({ minMs: 1, maxMs: 30_000 });
    for (let i = 0; i < 5_000; i++) b.next();
    expect(b.next()).toBe(30_000);
  });

  it('jittered stays within ± the fraction', () => {
    expect(jittered(100, 0.1, () => 0)).toBeCloseTo(90);
    expect(jittered(100, 0.1, () => 1)).toBeCloseTo(110);
    expect(jittered(100, 0, () => 0.3)).toBe(100);
  });
});
