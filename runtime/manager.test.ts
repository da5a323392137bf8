import { silentLogger } from './log.js';
import { Manager, type Runnable } from './manager.js';

/** A runnable that writes what happens to it into `events`. */
function recording(name: string, events: string[], extra: Partial<Runnable> = {}): Runnable {
  return {
    name,
    start: async () => {
      await Promise.resolve();
      events.push(`start ${name}`);
    },
    stop: async () => {
      await Promise.resolve();
      events.push(`stop ${name}`);
    },
    ...extra,
  };
}

describe('Manager', () => {
  it('starts in the order added, each after the one before, and stops in reverse', async () => {
    const events: string[] = [];
    const mgr = new Manager(silentLogger);
    for (const name of ['store', 'source', 'server']) mgr.add(recording(name, events));
    await mgr.start();
    await mgr.stop();
    expect(events).toEqual([
      'start store',
      'start source',
      'start server',
      'stop server',
      'stop source',
      'stop store',
    ]);
  });

  it('stops a runnable without a start too, and returns what it was given', async () => {
    const events: string[] = [];
    const mgr = new Manager(silentLogger);
    const pool = { name: 'pool', stop: () => void events.push('stop pool') };
    expect(mgr.add(pool)).toBe(pool);
    mgr.add(recording('server', events));
    await mgr.start();
    await mgr.stop();
    expect(events).toEqual(['start server', 'stop server', 'stop pool']);
  });

  it('names the runnable that failed to start, starts none after it, and stops only those started', async () => {
    const events: string[] = [];
    const mgr = new Manager(silentLogger);
    mgr.add(recording('store', events));
    mgr.add(recording('server', events, { start: () => Promise.reject(new Error('EADDRINUSE')) }));
    mgr.add(recording('health', events));
    await expect(mgr.start()).rejects.toThrow('server: EADDRINUSE');
    await mgr.stop();
    expect(events).toEqual(['start store', 'stop store']);
  });

  it('goes on stopping the others when one fails to stop, and logs it', async () => {
    const events: string[] = [];
    const warnings: unknown[] = [];
    const mgr = new Manager({
      ...silentLogger,
      warn: (msg, fields) => void warnings.push({ msg, ...fields }),
    });
    mgr.add(recording('store', events));
    mgr.add(recording('server', events, { stop: () => Promise.reject(new Error('stuck')) }));
    await mgr.start();
    await mgr.stop();
    expect(events).toEqual(['start store', 'start server', 'stop store']);
    expect(warnings).toEqual([expect.objectContaining({ msg: 'stop failed', runnable: 'server' })]);
  });

  it('is ready once every runnable started and says it is ready, and no longer once stopping', async () => {
    let recordsBuilt = false;
    const mgr = new Manager(silentLogger);
    mgr.add({ name: 'records', stop: () => {}, ready: () => recordsBuilt });
    mgr.add(recording('server', []));
    expect(mgr.ready()).toBe(false);
    await mgr.start();
    expect(mgr.ready()).toBe(false);
    recordsBuilt = true;
    expect(mgr.ready()).toBe(true);
    await mgr.stop();
    expect(mgr.ready()).toBe(false);
  });

  it('hands every start a signal that is aborted when the stop begins, before any runnable stops', async () => {
    let signal: AbortSignal | undefined;
    let abortedAtStop: boolean | undefined;
    const mgr = new Manager(silentLogger);
    mgr.add({
      name: 'processes',
      start: (s) => void (signal = s),
      stop: () => void (abortedAtStop = signal?.aborted),
    });
    await mgr.start();
    expect(signal?.aborted).toBe(false);
    await mgr.stop();
    expect(abortedAtStop).toBe(true);
  });

  it('starts nothing more once a stop has begun during the start, and stops what was starting', async () => {
    const events: string[] = [];
    const mgr = new Manager(silentLogger);
    mgr.add({ name: 'slow', start: () => void mgr.stop(), stop: () => void events.push('stop slow') });
    mgr.add(recording('server', events));
    await mgr.start();
    expect(events).toEqual(['stop slow']);
  });
});
