// A work queue in the shape of client-go's: a key waiting twice is queued
// once; a key is handled by one worker at a time (a key added while it is
// being handled runs again afterwards); several keys run in parallel; failures
// back off exponentially per key; a TerminalError is not retried. Keys are
// typed (an ObjectKey, a union of kinds): two keys are the same key when
// their ids (idOf) are equal. It reports to a QueueObserver what client-go's
// queue reports to its metrics (controller-metrics.ts).
import type { QueueObserver, QueueState, ReconcileResult } from './controller-metrics.js';

export class TerminalError extends Error {}

/** The queue key of a namespaced object: "namespace/name", as controller-runtime's NamespacedName. */
export function objectKey(obj: { metadata?: { namespace?: string; name?: string } }): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}

/** A namespaced object's key, as controller-runtime's types.NamespacedName. */
export interface ObjectKey {
  namespace: string;
  name: string;
}

/** The ObjectKey of an object. */
export function keyOfObject(obj: { metadata?: { namespace?: string; name?: string } }): ObjectKey {
  return { namespace: obj.metadata?.namespace ?? '', name: obj.metadata?.name ?? '' };
}

/** The id of an ObjectKey in a queue, a log line and a map: "namespace/name". */
export function objectKeyId(key: ObjectKey): string {
  return `${key.namespace}/${key.name}`;
}

/** The ObjectKey of a "namespace/name" id. */
export function parseObjectKeyId(id: string): ObjectKey {
  const slash = id.indexOf('/');
  return slash < 0
    ? { namespace: '', name: id }
    : { namespace: id.slice(0, slash), name: id.slice(slash + 1) };
}

/** The namespace of a "namespace/name" key (an object's, or a cluster's as the ClusterCache names it). */
export function namespaceOfKey(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? '' : key.slice(0, slash);
}

export interface Outcome {
  /** Handle the key again after this many milliseconds, even on success. */
  requeueAfterMs?: number;
}

export type Handler<K = string> = (key: K) => Promise<Outcome | void>;

export interface WorkQueueOptions<K = string> {
  concurrency: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  onError?: (key: K, err: unknown, retryInMs: number | undefined) => void;
  /** The identity of a key: required for keys other than strings. */
  idOf?: (key: K) => string;
  /** Told of adds, waits, handling times and results (controller-runtime's metrics). */
  metrics?: QueueObserver;
}

export class WorkQueue<K = string> {
  /** The key of each id waiting, being handled or scheduled. */
  private readonly keys = new Map<string, K>();
  private readonly waiting = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  /** performance.now() when each waiting key was added, and when each key being handled was taken. */
  private readonly addedAt = new Map<string, number>();
  private readonly startedAt = new Map<string, number>();
  private active = 0;
  private stopped = true;
  private idleWaiters: (() => void)[] = [];

  private readonly idOf: (key: K) => string;

  constructor(
    private readonly handler: Handler<K>,
    private readonly opts: WorkQueueOptions<K>,
  ) {
    this.idOf = opts.idOf ?? ((key) => String(key));
    opts.metrics?.watch(() => this.state());
  }

  /** For metrics: keys waiting, being handled, and for how long. */
  state(): QueueState {
    const now = performance.now();
    let unfinished = 0;
    let longest = 0;
    for (const at of this.startedAt.values()) {
      unfinished += now - at;
      longest = Math.max(longest, now - at);
    }
    return {
      depth: this.waiting.size,
      active: this.active,
      unfinishedSeconds: unfinished / 1000,
      longestRunningSeconds: longest / 1000,
    };
  }

  start(): void {
    this.stopped = false;
    this.pump();
  }

  /** Stops taking keys and waits for the ones being handled. */
  async shutdown(): Promise<void> {
    this.stopped = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    if (this.active) await new Promise<void>((r) => this.idleWaiters.push(r));
  }

  add(typed: K): void {
    const key = this.idOf(typed);
    this.keys.set(key, typed);
    if (!this.addedAt.has(key)) {
      this.addedAt.set(key, performance.now());
      this.opts.metrics?.added();
    }
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    this.waiting.add(key);
    this.pump();
  }

  addAfter(typed: K, ms: number): void {
    if (ms <= 0) return this.add(typed);
    const key = this.idOf(typed);
    const at = Date.now() + ms;
    const existing = this.timers.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(typed);
    }, ms);
    timer.unref();
    this.timers.set(key, { at, timer });
  }

  /** Forgets a key's failures: its next error starts from the base delay. */
  forget(key: K): void {
    this.failures.delete(this.idOf(key));
  }

  get length(): number {
    return this.waiting.size;
  }

  private pump(): void {
    while (!this.stopped && this.active < this.opts.concurrency) {
      const key = this.next();
      if (key === undefined) return;
      this.active++;
      this.processing.add(key);
      void this.run(key);
    }
  }

  private next(): string | undefined {
    for (const key of this.waiting) {
      if (this.processing.has(key)) continue;
      this.waiting.delete(key);
      const now = performance.now();
      this.opts.metrics?.taken((now - (this.addedAt.get(key) ?? now)) / 1000);
      this.addedAt.delete(key);
      this.startedAt.set(key, now);
      return key;
    }
    return undefined;
  }

  private async run(key: string): Promise<void> {
    const typed = this.keys.get(key) as K;
    let result: ReconcileResult = 'success';
    let terminal = false;
    try {
      const outcome = await this.handler(typed);
      this.failures.delete(key);
      // A retry scheduled by an earlier failure has nothing left to do.
      const pending = this.timers.get(key);
      if (pending) {
        clearTimeout(pending.timer);
        this.timers.delete(key);
      }
      if (outcome?.requeueAfterMs !== undefined) {
        result = 'requeue_after';
        this.addAfter(typed, outcome.requeueAfterMs);
      }
    } catch (err) {
      result = 'error';
      terminal = err instanceof TerminalError;
      if (err instanceof TerminalError) {
        this.failures.delete(key);
        this.opts.onError?.(typed, err, undefined);
      } else {
        const n = (this.failures.get(key) ?? 0) + 1;
        this.failures.set(key, n);
        const delay = this.backoff(n);
        this.opts.onError?.(typed, err, delay);
        this.opts.metrics?.retried();
        this.addAfter(typed, delay);
      }
    } finally {
      const began = this.startedAt.get(key);
      this.startedAt.delete(key);
      // Counted when done, as controller-runtime counts them: a count that has reached N means N have finished.
      if (began !== undefined) this.opts.metrics?.done((performance.now() - began) / 1000, result, terminal);
      this.processing.delete(key);
      this.active--;
      if (this.dirty.delete(key)) this.waiting.add(key);
      else if (!this.waiting.has(key) && !this.timers.has(key)) this.keys.delete(key);
      if (!this.active) this.idleWaiters.splice(0).forEach((r) => r());
      this.pump();
    }
  }

  /** base·2^(n-1), capped, with ±20 % jitter so that many failing keys do not retry in lockstep. */
  private backoff(failures: number): number {
    const base = this.opts.baseDelayMs ?? 100;
    const max = this.opts.maxDelayMs ?? 30_000;
    const plain = Math.min(max, base * 2 ** Math.min(failures - 1, 30));
    return Math.round(plain * (0.8 + Math.random() * 0.4));
  }
}
