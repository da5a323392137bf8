// The operator's writes to workload clusters, queued rather than all sent at
// once: a cold start or a change that touches every cluster would otherwise
// start every request at the same moment, and on a busy management host the
// requests would wait in the HTTP client while their timeouts ran (some 5 %
// timed out at 40 clusters, bench/README.md). A request starts only when the
// gate lets it: at most `maxInFlight` in all and
// `maxInFlightPerCluster` per cluster, each cluster with a token bucket of
// `qps` and `burst` (client-go's client-side rate limit, whose defaults
// controller-runtime uses), and the clusters served in turn, so that one
// cluster with many writes does not hold the others back. The request's
// timeout starts when it starts, not when it is queued.
import { withTimeout } from './equal.js';

export interface WriteGateOptions {
  maxInFlight: number;
  maxInFlightPerCluster: number;
  /** Requests a second per cluster, sustained (0: no rate limit). */
  qps: number;
  /** Requests a cluster may make at once above its rate. */
  burst: number;
  now?: () => number;
}

interface Job {
  what: string;
  timeoutMs: number;
  start: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  queuedAt: number;
}

interface ClusterQueue {
  waiting: Job[];
  inFlight: number;
  tokens: number;
  refilledAt: number;
}

/** What the gate has done, for metrics and tests. */
export interface WriteGateStats {
  started: number;
  queued: number;
  inFlight: number;
  /** Longest time a request waited for its turn, in ms. */
  maxWaitMs: number;
}

export class WriteGate {
  private readonly clusters = new Map<string, ClusterQueue>();
  /** Clusters with waiting requests, in the order they are served (round robin). */
  private turn: string[] = [];
  private inFlight = 0;
  private started = 0;
  private maxWaitMs = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly opts: WriteGateOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Runs `request` for `cluster` when the gate allows, within `timeoutMs` from when it starts. */
  run<T>(cluster: string, what: string, timeoutMs: number, request: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const queue = this.queueOf(cluster);
      if (queue.waiting.length === 0) this.turn.push(cluster);
      queue.waiting.push({
        what,
        timeoutMs,
        start: request,
        resolve: resolve as (value: unknown) => void,
        reject,
        queuedAt: this.now(),
      });
      this.pump();
    });
  }

  /** Forgets a cluster that is gone; requests still queued for it fail. */
  forget(cluster: string): void {
    const queue = this.clusters.get(cluster);
    if (!queue) return;
    this.clusters.delete(cluster);
    this.turn = this.turn.filter((c) => c !== cluster);
    for (const job of queue.waiting.splice(0))
      job.reject(new Error(`${job.what}: cluster ${cluster} is gone`));
  }

  stats(): WriteGateStats {
    let queued = 0;
    for (const q of this.clusters.values()) queued += q.waiting.length;
    return { started: this.started, queued, inFlight: this.inFlight, maxWaitMs: this.maxWaitMs };
  }

  private queueOf(cluster: string): ClusterQueue {
    let queue = this.clusters.get(cluster);
    if (!queue) {
      queue = { waiting: [], inFlight: 0, tokens: this.opts.burst, refilledAt: this.now() };
      this.clusters.set(cluster, queue);
    }
    return queue;
  }

  /** Starts what may start now, each cluster in turn; if only the rate holds some back, comes back when a token is due. */
  private pump(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    let nextTokenInMs = Infinity;
    let progressed = true;
    while (progressed && this.inFlight < this.opts.maxInFlight && this.turn.length > 0) {
      progressed = false;
      for (let i = 0; i < this.turn.length && this.inFlight < this.opts.maxInFlight;) {
        const cluster = this.turn[i]!;
        const queue = this.clusters.get(cluster)!;
        this.refill(queue);
        if (queue.inFlight >= this.opts.maxInFlightPerCluster) {
          i++;
          continue;
        }
        if (this.opts.qps > 0 && queue.tokens < 1) {
          nextTokenInMs = Math.min(nextTokenInMs, ((1 - queue.tokens) / this.opts.qps) * 1000);
          i++;
          continue;
        }
        this.start(queue, queue.waiting.shift()!);
        progressed = true;
        // The cluster goes to the back of the turn, or leaves it when it has nothing left.
        this.turn.splice(i, 1);
        if (queue.waiting.length > 0) this.turn.push(cluster);
      }
    }
    if (this.turn.length > 0 && nextTokenInMs < Infinity && this.inFlight < this.opts.maxInFlight) {
      this.timer = setTimeout(() => this.pump(), Math.max(1, Math.ceil(nextTokenInMs)));
      this.timer.unref();
    }
  }

  private refill(queue: ClusterQueue): void {
    if (this.opts.qps <= 0) return;
    const now = this.now();
    queue.tokens = Math.min(
      this.opts.burst,
      queue.tokens + ((now - queue.refilledAt) / 1000) * this.opts.qps,
    );
    queue.refilledAt = now;
  }

  private start(queue: ClusterQueue, job: Job): void {
    this.inFlight++;
    queue.inFlight++;
    if (this.opts.qps > 0) queue.tokens -= 1;
    this.started++;
    this.maxWaitMs = Math.max(this.maxWaitMs, this.now() - job.queuedAt);
    let request: Promise<unknown>;
    try {
      request = job.start();
    } catch (err) {
      request = Promise.reject(err);
    }
    withTimeout(request, job.timeoutMs, job.what)
      .then(job.resolve, job.reject)
      .finally(() => {
        this.inFlight--;
        queue.inFlight--;
        this.pump();
      });
  }
}
