import { WriteGate } from './write-gate.js';

/** A request the test finishes by hand, recording when it started. */
function manual() {
  const started: string[] = [];
  const finish = new Map<string, () => void>();
  const request = (name: string) => () =>
    new Promise<string>((resolve) => {
      started.push(name);
      finish.set(name, () => resolve(name));
    });
  return { started, finish: (name: string) => finish.get(name)!(), request };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('WriteGate', () => {
  it('keeps at most maxInFlight in all and maxInFlightPerCluster per cluster', async () => {
    const gate = new WriteGate({ maxInFlight: 3, maxInFlightPerCluster: 2, qps: 0, burst: 1 });
    const m = manual();
    const done = ['a1', 'a2', 'a3', 'b1', 'b2', 'c1'].map((n) => gate.run(n[0]!, n, 10_000, m.request(n)));
    await tick();
    expect(m.started).toEqual(['a1', 'a2', 'b1']);
    expect(gate.stats()).toMatchObject({ inFlight: 3, queued: 3 });
    m.finish('b1');
    await tick();
    // Waiting: a3 (a first to wait), b2, c1; a is at its own limit, so b2 goes.
    expect(m.started).toEqual(['a1', 'a2', 'b1', 'b2']);
    m.finish('a1');
    await tick();
    expect(m.started).toEqual(['a1', 'a2', 'b1', 'b2', 'a3']);
    for (const n of ['a2', 'b2']) m.finish(n);
    await tick();
    expect(m.started.at(-1)).toBe('c1');
    m.finish('a3');
    m.finish('c1');
    expect(await Promise.all(done)).toEqual(['a1', 'a2', 'a3', 'b1', 'b2', 'c1']);
    expect(gate.stats()).toMatchObject({ started: 6, inFlight: 0, queued: 0 });
  });

  it('serves clusters in turn: one with many writes does not hold back one that comes later', async () => {
    const gate = new WriteGate({ maxInFlight: 1, maxInFlightPerCluster: 1, qps: 0, burst: 1 });
    const order: string[] = [];
    const quick = (name: string) => async () => void order.push(name);
    const many = Array.from({ length: 10 }, (_, i) => gate.run('big', `big${i}`, 1000, quick(`big${i}`)));
    const small = gate.run('small', 'small0', 1000, quick('small0'));
    await Promise.all([...many, small]);
    // In turn: big0 (already started), big1, then small0, not after all ten.
    expect(order.indexOf('small0')).toBe(2);
  });

  it('starts the timeout when the request starts, not while it waits its turn', async () => {
    const gate = new WriteGate({ maxInFlight: 1, maxInFlightPerCluster: 1, qps: 0, burst: 1 });
    const slow = gate.run('a', 'slow', 1000, () => new Promise((r) => setTimeout(() => r('slow'), 80)));
    const waiting = gate.run('a', 'waiting', 40, async () => 'waiting');
    expect(await Promise.all([slow, waiting])).toEqual(['slow', 'waiting']);
    await expect(gate.run('a', 'apply X', 20, () => new Promise(() => undefined))).rejects.toThrow(
      'apply X: no answer within 20 ms',
    );
  });

  it('holds a cluster to its rate after the burst', async () => {
    const gate = new WriteGate({ maxInFlight: 10, maxInFlightPerCluster: 10, qps: 20, burst: 2 });
    const at: number[] = [];
    const began = Date.now();
    await Promise.all(
      Array.from({ length: 3 }, (_, i) =>
        gate.run('a', `w${i}`, 1000, async () => void at.push(Date.now() - began)),
      ),
    );
    expect(at[1]!).toBeLessThan(40);
    // The third waits for a token: 1 / 20 s.
    expect(at[2]!).toBeGreaterThanOrEqual(40);
    // Another cluster has its own bucket.
    const other = Date.now();
    await gate.run('b', 'b0', 1000, async () => undefined);
    expect(Date.now() - other).toBeLessThan(40);
  });

  it('fails what is queued for a cluster that is forgotten, and passes errors through', async () => {
    const gate = new WriteGate({ maxInFlight: 1, maxInFlightPerCluster: 1, qps: 0, burst: 1 });
    const m = manual();
    const first = gate.run('a', 'a1', 1000, m.request('a1'));
    const queued = gate.run('a', 'apply a2', 1000, m.request('a2'));
    gate.forget('a');
    await expect(queued).rejects.toThrow('apply a2: cluster a is gone');
    m.finish('a1');
    expect(await first).toBe('a1');
    await expect(
      gate.run('b', 'b1', 1000, () => {
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
  });
});
