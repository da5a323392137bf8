import { TerminalError, WorkQueue } from './workqueue.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits for a condition instead of a fixed time: these tests run on busy shared machines. */
async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(2);
  }
}

describe('WorkQueue', () => {
  it('runs a key once however often it was added while waiting', async () => {
    const seen: string[] = [];
    const q = new WorkQueue(async (k) => void seen.push(k), { concurrency: 1 });
    q.add('a');
    q.add('a');
    q.add('b');
    q.start();
    await until(() => seen.length >= 2);
    await q.shutdown();
    expect(seen).toEqual(['a', 'b']);
  });

  it('never runs one key twice at once, and runs it again if added meanwhile', async () => {
    let running = 0;
    let max = 0;
    let runs = 0;
    let release!: () => void;
    const firstRunHeld = new Promise<void>((r) => (release = r));
    const q = new WorkQueue(
      async () => {
        running++;
        max = Math.max(max, running);
        runs++;
        if (runs === 1) await firstRunHeld;
        running--;
      },
      { concurrency: 4 },
    );
    q.start();
    q.add('a');
    await until(() => running === 1);
    q.add('a');
    q.add('a');
    await sleep(20);
    expect(runs).toBe(1);
    release();
    await until(() => runs === 2 && running === 0);
    await q.shutdown();
    expect(max).toBe(1);
    expect(runs).toBe(2);
  });

  it('runs different keys in parallel: a slow key does not hold up others', async () => {
    const done: string[] = [];
    let release!: () => void;
    const slowHeld = new Promise<void>((r) => (release = r));
    const q = new WorkQueue(
      async (k) => {
        if (k === 'slow') await slowHeld;
        done.push(k);
      },
      { concurrency: 2 },
    );
    q.start();
    q.add('slow');
    q.add('fast1');
    q.add('fast2');
    await until(() => done.length >= 2);
    expect(done).toEqual(['fast1', 'fast2']);
    release();
    await until(() => done.length === 3);
    await q.shutdown();
  });

  it('retries failures with growing delays and not terminal errors', async () => {
    const times: number[] = [];
    let terminalRuns = 0;
    const q = new WorkQueue(
      async (k) => {
        if (k === 'terminal') {
          terminalRuns++;
          throw new TerminalError('no');
        }
        times.push(Date.now());
        if (times.length < 4) throw new Error('again');
      },
      // Delays of ~50, ~100, ~200 ms: far enough apart that a busy event loop cannot reorder them.
      { concurrency: 2, baseDelayMs: 50 },
    );
    q.start();
    q.add('x');
    q.add('terminal');
    await until(() => times.length === 4);
    await sleep(100);
    await q.shutdown();
    expect(times).toHaveLength(4);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    expect(gaps[0]!).toBeGreaterThanOrEqual(35);
    expect(gaps[2]!).toBeGreaterThan(gaps[0]!);
    expect(terminalRuns).toBe(1);
  });
});
