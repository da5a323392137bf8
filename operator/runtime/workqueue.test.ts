import { TerminalError, WorkQueue } from './workqueue.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('WorkQueue', () => {
  it('runs a key once however often it was added while waiting', async () => {
    const seen: string[] = [];
    const q = new WorkQueue(async (k) => void seen.push(k), { concurrency: 1 });
    q.add('a');
    q.add('a');
    q.add('b');
    q.start();
    await sleep(20);
    expect(seen).toEqual(['a', 'b']);
    await q.shutdown();
  });

  it('never runs one key twice at once, and runs it again if added meanwhile', async () => {
    let running = 0;
    let max = 0;
    let runs = 0;
    const q = new WorkQueue(
      async () => {
        running++;
        max = Math.max(max, running);
        runs++;
        await sleep(20);
        running--;
      },
      { concurrency: 4 },
    );
    q.start();
    q.add('a');
    await sleep(5);
    q.add('a');
    q.add('a');
    await sleep(80);
    expect(max).toBe(1);
    expect(runs).toBe(2);
    await q.shutdown();
  });

  it('runs different keys in parallel: a slow key does not hold up others', async () => {
    const done: string[] = [];
    const q = new WorkQueue(
      async (k) => {
        await sleep(k === 'slow' ? 200 : 5);
        done.push(k);
      },
      { concurrency: 2 },
    );
    q.start();
    q.add('slow');
    q.add('fast1');
    q.add('fast2');
    await sleep(50);
    expect(done).toEqual(['fast1', 'fast2']);
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
      { concurrency: 2, baseDelayMs: 10 },
    );
    q.start();
    q.add('x');
    q.add('terminal');
    await sleep(250);
    expect(times).toHaveLength(4);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    expect(gaps[2]!).toBeGreaterThan(gaps[0]!);
    expect(terminalRuns).toBe(1);
    await q.shutdown();
  });
});
