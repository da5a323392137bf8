import { ReadinessProbe } from './probe.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A probe whose answers the test decides, counting calls and the most ever in flight at once. */
function scripted(answer: () => boolean, takesMs = 0) {
  const seen = { calls: 0, inFlight: 0, maxInFlight: 0 };
  const probe = async () => {
    seen.calls++;
    seen.inFlight++;
    seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight);
    await sleep(takesMs);
    seen.inFlight--;
    if (!answer()) throw new Error('refused');
  };
  return { probe, seen };
}

describe('ReadinessProbe', () => {
  it('reports the edge from not answering to answering, once, and not every interval', async () => {
    let up = false;
    let ready = 0;
    const { probe, seen } = scripted(() => up);
    const p = new ReadinessProbe({ probe, onReady: () => ready++, intervalMs: 10 });
    p.start();
    await sleep(150);
    expect(ready).toBe(0);
    up = true;
    await sleep(150);
    expect(ready).toBe(1);
    up = false;
    await sleep(120);
    up = true;
    await sleep(120);
    p.stop();
    expect(ready).toBe(2);
    expect(seen.calls).toBeGreaterThan(5);
  });

  it('counts a first answer after start as ready: the cluster may be back before the first probe', async () => {
    let ready = 0;
    const { probe } = scripted(() => true);
    const p = new ReadinessProbe({ probe, onReady: () => ready++, intervalMs: 10 });
    p.start();
    await sleep(120);
    p.stop();
    expect(ready).toBe(1);
  });

  it('keeps one probe in flight however slow it is, and none after stop', async () => {
    const { probe, seen } = scripted(() => false, 50);
    const p = new ReadinessProbe({ probe, onReady: () => undefined, intervalMs: 5 });
    p.start();
    await sleep(200);
    p.stop();
    p.start(); // a restart while a probe is in flight must not leave two loops
    await sleep(200);
    p.stop();
    const calls = seen.calls;
    await sleep(100);
    expect(seen.maxInFlight).toBe(1);
    expect(seen.calls).toBe(calls);
    expect(calls).toBeLessThanOrEqual(10);
  });
});
