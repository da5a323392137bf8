// An informer that does not die. @kubernetes/client-node's ListWatch (what
// makeInformer builds) re-lists on 410 Gone and re-opens after its inactivity
// timeout (runtime/quiet-watch.ts: with bookmarks, 75 s) but, in 2.x as in 1.x, stops for good on any other error
// (connection refused, 429, 5xx). Wrapped here so that it starts again after
// errors with jittered exponential backoff, re-lists now and then with jitter
// (no watch dies silently, even one that went quiet without an error), and
// reports whether its API server answers. The operator, the dns-server and the
// tests all watch through it.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ListWatch,
  type Informer,
  type KubeConfig,
  type KubernetesObject,
  type ListPromise,
  type ObjectCache,
} from '@kubernetes/client-node';
import { Backoff, jittered, type BackoffOptions } from './backoff.js';
import { httpStatus } from './kube-errors.js';
import { QuietWatch, type ObjectTransform } from './quiet-watch.js';
import { errorText } from './log.js';
import { WatchReconnectPolicy } from './watch-reconnect.js';

export type ChangeType = 'add' | 'update' | 'delete';

/** Why an attempt to list and watch was made. */
export type AttemptReason = 'start' | 'retry' | 'relist';

/** What is watched through: client-node's ListWatch, or a stand-in in a unit test. */
export type CachingInformer<T extends KubernetesObject> = Informer<T> & ObjectCache<T>;

export interface ListWatchSpec<T extends KubernetesObject> {
  kc: KubeConfig;
  /** The watch path, e.g. /api/v1/services or /apis/g/v/namespaces/ns/kind. */
  path: string;
  list: ListPromise<T>;
  labelSelector?: string;
  /** e.g. metadata.name=coredns: one object instead of a whole namespace's worth of events. */
  fieldSelector?: string;
  /** An Accept header for every watch request (a metadata-only watch); the list function sets its own. */
  accept?: string;
  /** Applied to every listed or watched object before it is cached. */
  transform?: ObjectTransform;
}

/** What makeInformer builds (not started), plus the field selector, Accept header and reconnect policy it does not pass on. */
export function listWatch<T extends KubernetesObject>(spec: ListWatchSpec<T>): ListWatch<T> {
  const reconnect = new WatchReconnectPolicy();
  const informer = new ListWatch<T>(
    spec.path,
    new QuietWatch(
      spec.accept === undefined ? spec.kc : accepting(spec.kc, spec.accept),
      Math.random,
      spec.transform,
    ),
    spec.transform === undefined ? spec.list : transformedList(spec.list, spec.transform),
    false,
    spec.labelSelector,
    spec.fieldSelector,
    { delayFn: reconnect.delayFn },
  );
  informer.on('connect', reconnect.connected);
  return informer;
}

function transformedList<T extends KubernetesObject>(
  list: ListPromise<T>,
  transform: ObjectTransform,
): ListPromise<T> {
  return async () => {
    const result = await list();
    // The transform keeps the object's type (it only drops fields a cache does not need).
    result.items = result.items.map((item) => transform(item) as T);
    return result;
  };
}

type RequestContext = Parameters<KubeConfig['applySecurityAuthentication']>[0];

/**
 * The KubeConfig as client-node's Watch uses it (the current cluster, and the authentication of
 * each request), with one Accept header set on every watch request: Watch takes no headers of its own.
 */
function accepting(kc: KubeConfig, accept: string): KubeConfig {
  const view: Pick<KubeConfig, 'getCurrentCluster' | 'applySecurityAuthentication'> = {
    getCurrentCluster: () => kc.getCurrentCluster(),
    applySecurityAuthentication: async (ctx: RequestContext) => {
      await kc.applySecurityAuthentication(ctx);
      ctx.setHeaderParam('Accept', accept);
    },
  };
  // Watch (client-node 2.x watch.js) calls only these two; the cast says so instead of copying a KubeConfig.
  return view as KubeConfig;
}

export interface RestartingInformerOptions<T extends KubernetesObject> {
  /** Makes an informer, not started: listWatch(spec), or a stand-in in a unit test. */
  make: () => CachingInformer<T>;
  /**
   * 'in-place' (the default): one informer for good, whose objects survive errors (an unreachable
   * cluster keeps its last known objects); a relist clears its resourceVersion, so what changed
   * meanwhile reaches the change listeners as adds, updates and deletes.
   * 'fresh': every attempt makes a new informer, which takes over only once it has listed: until
   * then the previous one's objects are what list() returns. Only the informer in use reports
   * changes; a new one's objects arrive all at once, as a 'synced'.
   */
  restart?: 'in-place' | 'fresh';
  /** After a failure. Default: 250 ms doubling to 5 s, ±20 %. */
  backoff?: BackoffOptions;
  /** Full re-list period (undefined: never). */
  relistMs?: number;
  /** Each relist period is spread by ± this fraction. Default 0.1. */
  relistJitter?: number;
}

export class RestartingInformer<T extends KubernetesObject> {
  /** The informer whose objects list() and get() read: the last to have listed. */
  private current: CachingInformer<T> | undefined;
  private readonly restart: 'in-place' | 'fresh';
  private readonly backoff: Backoff;
  private readonly changeListeners: ((type: ChangeType, obj: T) => void)[] = [];
  private readonly healthListeners: ((healthy: boolean, error?: string) => void)[] = [];
  private readonly syncedListeners: ((why: AttemptReason) => void)[] = [];
  private readonly failureListeners: ((err: unknown, retryInMs: number) => void)[] = [];
  private syncWaiters: (() => void)[] = [];
  private stopped = true;
  /** Informers we stopped on purpose: the abort error each reports is not a failure. */
  private readonly quiet = new WeakSet<CachingInformer<T>>();
  /** Whether each informer's latest attempt has failed already: one failure per attempt. */
  private readonly failedAttempt = new WeakMap<CachingInformer<T>, boolean>();
  private timer?: NodeJS.Timeout;
  /** The timer is a retry after a failure (not the next relist). */
  private retryDue = false;
  /** The first list succeeded (the objects are the API server's). */
  synced = false;
  /** The first attempt has finished, well or not. */
  tried = false;
  healthy = false;
  lastError?: string;
  /** The HTTP status of the last failure, when the API server answered at all. */
  lastErrorStatus?: number;

  constructor(private readonly opts: RestartingInformerOptions<T>) {
    this.restart = opts.restart ?? 'in-place';
    this.backoff = new Backoff(opts.backoff ?? { minMs: 250, maxMs: 5_000, jitter: 0.2 });
    if (this.restart === 'in-place') this.current = this.wired(opts.make());
  }

  onChange(listener: (type: ChangeType, obj: T) => void): void {
    this.changeListeners.push(listener);
  }

  onHealth(listener: (healthy: boolean, error?: string) => void): void {
    this.healthListeners.push(listener);
  }

  /** An attempt listed and watches: the objects are the API server's as of now. */
  onSynced(listener: (why: AttemptReason) => void): void {
    this.syncedListeners.push(listener);
  }

  /** An attempt, or a watch that was running, failed; the next attempt is in `retryInMs`. */
  onFailure(listener: (err: unknown, retryInMs: number) => void): void {
    this.failureListeners.push(listener);
  }

  list(namespace?: string): readonly T[] {
    return this.current?.list(namespace) ?? [];
  }

  get(name: string, namespace?: string): T | undefined {
    return this.current?.get(name, namespace);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.attempt('start');
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTimer();
    const informer = this.current;
    if (informer) {
      this.quiet.add(informer);
      await informer.stop();
    }
    this.syncWaiters.splice(0).forEach((w) => w());
  }

  /** Resolves once the first attempt has finished, well or not, or after `timeoutMs` (if given). */
  async waitForFirstAttempt(timeoutMs?: number): Promise<void> {
    if (this.tried) return;
    await new Promise<void>((resolve) => {
      const timer = timeoutMs === undefined ? undefined : setTimeout(resolve, timeoutMs);
      this.syncWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Someone who knows the API server answers again (the cluster's readiness
   * probe) says so: a watch waiting out its backoff forgets it and starts now,
   * instead of leaving a cluster that is back unwatched for up to the longest backoff.
   * An attempt already under way, or a healthy watch, is left alone.
   */
  retryNow(): void {
    if (this.stopped || this.healthy || !this.retryDue) return;
    this.cancelTimer();
    this.backoff.reset();
    this.attempt('retry');
  }

  /** Forwards an informer's events; made once per informer. */
  private wired(informer: CachingInformer<T>): CachingInformer<T> {
    for (const type of ['add', 'update', 'delete'] as const)
      informer.on(type, (obj: T) => {
        if (!this.stopped && informer === this.current) this.changeListeners.forEach((l) => l(type, obj));
      });
    informer.on('error', (err?: unknown) => this.failed(informer, err));
    return informer;
  }

  private attempt(why: AttemptReason): void {
    if (this.stopped) return;
    const informer = this.restart === 'fresh' ? this.wired(this.opts.make()) : this.current!;
    // In place, the same informer again: what it reports from now on is this attempt's.
    this.quiet.delete(informer);
    this.failedAttempt.set(informer, false);
    // informer.start() can reject before its watch is set up (a kubeconfig without a cluster):
    // that is a failure like any other. ListWatch reports a failed list through 'error' instead.
    this.run(informer, why).catch((err: unknown) => this.failed(informer, err));
  }

  private async run(informer: CachingInformer<T>, why: AttemptReason): Promise<void> {
    await informer.start();
    if (this.stopped) {
      // ListWatch opens its watch even if stopped while it listed.
      this.quiet.add(informer);
      await informer.stop();
      return;
    }
    if (this.failedAttempt.get(informer)) return;
    const previous = this.current;
    this.current = informer;
    if (previous !== undefined && previous !== informer) {
      this.quiet.add(previous);
      void previous.stop();
    }
    this.backoff.reset();
    this.synced = true;
    this.markTried();
    this.setHealth(true);
    this.syncedListeners.forEach((l) => l(why));
    this.scheduleRelist();
  }

  private failed(informer: CachingInformer<T>, err: unknown): void {
    if (this.stopped || this.quiet.has(informer) || this.failedAttempt.get(informer)) return;
    this.failedAttempt.set(informer, true);
    if (this.restart === 'fresh') {
      // Never used again; its objects stay readable if it is the current one.
      this.quiet.add(informer);
      void informer.stop();
    }
    this.markTried();
    this.lastErrorStatus = httpStatus(err);
    this.setHealth(false, errorText(err));
    const retryInMs = this.scheduleRetry();
    this.failureListeners.forEach((l) => l(err, retryInMs));
  }

  /** The retry after a failure, after the backoff; returns the wait. */
  private scheduleRetry(): number {
    const ms = this.backoff.next();
    this.setTimer(ms, () => this.attempt('retry'));
    this.retryDue = true;
    return ms;
  }

  private scheduleRelist(): void {
    if (this.opts.relistMs === undefined) return this.cancelTimer();
    this.setTimer(jittered(this.opts.relistMs, this.opts.relistJitter ?? 0.1), () => void this.relist());
  }

  /** One timer at a time: the retry after a failure, or the next relist, never both. */
  private setTimer(ms: number, due: () => void): void {
    this.cancelTimer();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.retryDue = false;
      due();
    }, ms);
    this.timer.unref();
  }

  private cancelTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.retryDue = false;
  }

  /** A full list: in place, the same informer with an empty resourceVersion; else a fresh one. */
  private async relist(): Promise<void> {
    if (this.stopped) return;
    const informer = this.current!;
    if (this.restart === 'in-place') {
      this.quiet.add(informer);
      await informer.stop();
      // The aborted watch reports its abort asynchronously, and ListWatch's handler of it aborts
      // whatever request is current: let it pass before starting again.
      await sleep(100);
      // ListWatch keeps resourceVersion private; clearing it is the only way to ask it for a full list.
      (informer as unknown as { resourceVersion: string }).resourceVersion = '';
    }
    this.attempt('relist');
  }

  private markTried(): void {
    if (this.tried) return;
    this.tried = true;
    this.syncWaiters.splice(0).forEach((w) => w());
  }

  private setHealth(healthy: boolean, error?: string): void {
    const changed = healthy !== this.healthy;
    this.healthy = healthy;
    this.lastError = healthy ? undefined : error;
    if (healthy) this.lastErrorStatus = undefined;
    if (changed) this.healthListeners.forEach((l) => l(healthy, error));
  }
}
