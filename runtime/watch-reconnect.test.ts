import { WatchReconnectPolicy } from './watch-reconnect.js';

describe('WatchReconnectPolicy', () => {
  function policy() {
    let now = 0;
    const waits: number[] = [];
    const p = new WatchReconnectPolicy(
      5_000,
      () => now,
      async (ms) => void waits.push(ms),
    );
    return { p, waits, at: (t: number) => void (now = t) };
  }

  it('re-opens at once after a watch that lived long (the API server ended it on schedule)', async () => {
    const { p, waits, at } = policy();
    p.connected();
    at(30 * 60_000);
    p.connected();
    await p.delayFn(16_000);
    expect(waits).toEqual([]);
  });

  it("keeps ListWatch's delay after a watch that ended quickly", async () => {
    const { p, waits, at } = policy();
    at(1_000);
    p.connected();
    at(1_200);
    p.connected();
    await p.delayFn(2_000);
    expect(waits).toEqual([2_000]);
  });

  it('judges each watch by its own life', async () => {
    const { p, waits, at } = policy();
    p.connected();
    at(100);
    p.connected();
    await p.delayFn(1_000);
    at(60_000);
    p.connected();
    await p.delayFn(2_000);
    expect(waits).toEqual([1_000]);
  });
});
