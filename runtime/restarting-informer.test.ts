// The restart logic against a stand-in informer that behaves as client-node's
// ListWatch does where it matters: a failed start reports an 'error' and
// resolves, and stop() reports the abort of its watch as an 'error' later on.
// What ListWatch does against a real API server is left to the integration tests.
import type { ErrorCallback, KubernetesObject, ObjectCallback } from '@kubernetes/client-node';
import { RestartingInformer, type CachingInformer } from './restarting-informer.js';

/** An object callback or an error callback: each is called only with what its verb carries. */
type Listener = (arg: never) => void;
type ObjectVerb = 'add' | 'update' | 'delete' | 'change';

class StandIn implements CachingInformer<KubernetesObject> {
  private readonly listeners = new Map<string, Listener[]>();
  objects: KubernetesObject[] = [];
  resourceVersion = '7';
  starts = 0;
  /** What the next start does: list `objects`, or fail with this error. */
  failNext: Error | undefined;

  constructor(readonly id: number) {}

  on(verb: ObjectVerb, cb: ObjectCallback<KubernetesObject>): void;
  on(verb: 'error' | 'connect', cb: ErrorCallback): void;
  on(verb: string, cb: Listener): void {
    this.listeners.set(verb, [...(this.listeners.get(verb) ?? []), cb]);
  }
  off(verb: ObjectVerb, cb: ObjectCallback<KubernetesObject>): void;
  off(verb: 'error' | 'connect', cb: ErrorCallback): void;
  off(verb: string, cb: Listener): void {
    this.listeners.set(
      verb,
      (this.listeners.get(verb) ?? []).filter((l) => l !== cb),
    );
  }
  emit(verb: 'add', obj: KubernetesObject): void;
  emit(verb: 'error', err: Error): void;
  emit(verb: string, arg: KubernetesObject | Error): void {
    (this.listeners.get(verb) ?? []).forEach((l) => l(arg as never));
  }
  async start(): Promise<void> {
    this.starts++;
    const err = this.failNext;
    this.failNext = undefined;
    if (err) return this.emit('error', err);
    this.objects.forEach((o) => this.emit('add', o));
  }
  async stop(): Promise<void> {
    setTimeout(() => this.emit('error', new Error('This operation was aborted')), 5);
  }
  get(name: string): KubernetesObject | undefined {
    return this.objects.find((o) => o.metadata?.name === name);
  }
  list(): readonly KubernetesObject[] {
    return this.objects;
  }
}

const obj = (name: string): KubernetesObject => ({ metadata: { name } });

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 2));
  }
}

function watched(opts: { restart: 'in-place' | 'fresh'; relistMs?: number; minMs?: number }) {
  const made: StandIn[] = [];
  const failures: number[] = [];
  const synced: string[] = [];
  const w = new RestartingInformer<KubernetesObject>({
    make: () => {
      const s = new StandIn(made.length);
      made.push(s);
      return s;
    },
    restart: opts.restart,
    backoff: { minMs: opts.minMs ?? 1, maxMs: 4 },
    relistMs: opts.relistMs,
  });
  w.onFailure((_err, retryInMs) => failures.push(retryInMs));
  w.onSynced((why) => synced.push(why));
  return { w, made, failures, synced };
}

describe('RestartingInformer', () => {
  it('starts again after a failure, with backoff, and reports health once it lists', async () => {
    const { w, made, failures, synced } = watched({ restart: 'in-place', minMs: 2 });
    const health: boolean[] = [];
    w.onHealth((h) => health.push(h));
    made[0]!.failNext = Object.assign(new Error('Too Many Requests'), { statusCode: 429 });
    w.start();
    await w.waitForFirstAttempt();
    expect([w.tried, w.synced, w.healthy, w.lastErrorStatus]).toEqual([true, false, false, 429]);
    await until(() => w.healthy);
    // Health starts false: only the change to true is reported.
    expect([failures, synced, health, made.length]).toEqual([[2], ['retry'], [true], 1]);
    await w.stop();
  });

  it('retryNow skips the rest of the backoff', async () => {
    const { w, made } = watched({ restart: 'in-place', minMs: 60_000 });
    made[0]!.failNext = new Error('connection refused');
    w.start();
    await w.waitForFirstAttempt();
    expect(w.healthy).toBe(false);
    w.retryNow();
    await until(() => w.healthy);
    expect(made[0]!.starts).toBe(2);
    await w.stop();
  });

  it('relists in place: the same informer, its resourceVersion cleared, its abort not a failure', async () => {
    const { w, made, failures, synced } = watched({ restart: 'in-place', relistMs: 10 });
    made[0]!.objects = [obj('a')];
    w.start();
    await until(() => synced.length >= 3);
    await w.stop();
    expect(synced.slice(0, 3)).toEqual(['start', 'relist', 'relist']);
    expect([made.length, made[0]!.resourceVersion, failures]).toEqual([1, '', []]);
  });

  it('fresh: a new informer takes over only once listed, and the replaced one aborting is no failure', async () => {
    const { w, made, failures, synced } = watched({ restart: 'fresh', relistMs: 10 });
    const changes: string[] = [];
    w.onChange((type, o) => changes.push(`${type} ${o.metadata?.name}`));
    w.start();
    await until(() => synced.length >= 4);
    await w.stop();
    // One informer per relist, not one per retry after its predecessor's abort (a loop every backoff).
    expect(failures).toEqual([]);
    expect(synced.slice(0, 4)).toEqual(['start', 'relist', 'relist', 'relist']);
    expect(made.length).toBe(synced.length);
    expect(changes).toEqual([]);
  });

  it('fresh: the last objects stay readable while a new informer fails', async () => {
    let n = 0;
    const objects = [obj('kept')];
    const failing = new Error('connection refused');
    const w = new RestartingInformer<KubernetesObject>({
      make: () => {
        const s = new StandIn(n++);
        s.objects = objects;
        if (n > 1) s.failNext = failing;
        return s;
      },
      restart: 'fresh',
      backoff: { minMs: 1, maxMs: 2 },
      relistMs: 5,
    });
    const errors: unknown[] = [];
    w.onFailure((err) => errors.push(err));
    w.start();
    await until(() => errors.length >= 3);
    expect(w.list().map((o) => o.metadata?.name)).toEqual(['kept']);
    expect(w.healthy).toBe(false);
    await w.stop();
  });
});
