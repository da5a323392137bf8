// What a process runs, started in order and stopped in reverse on one signal,
// as controller-runtime's manager: main adds its components (a store, sources,
// servers, the health endpoint) and calls start; no component keeps a list of
// what to stop. The operator's manager (operator/manager/manager.ts) starts and
// stops its controllers as this same Runnable.
import type { Logger } from './log.js';
import { stopOnSignals, type Stop } from './signals.js';

export interface Runnable {
  /** For logs and errors: "records", "kubernetes:capi-dns", "dns". */
  readonly name: string;
  /**
   * Resolves once it runs (a server listens, a source watches); absent: it runs from construction
   * (a thread started on demand, a prober driven by its targets). `stopping` is aborted when the
   * manager begins to stop: work the runnable starts later by itself (a retry, a replacement) asks it.
   */
  start?(stopping: AbortSignal): void | Promise<void>;
  stop(): void | Promise<void>;
  /** Ready for traffic (/readyz); absent: ready once started. */
  ready?(): boolean;
}

export interface SignalOptions {
  /** Exit anyway this long after the stop began. */
  graceMs: number;
  /** After SIGTERM, unready for this long while everything still runs (CoreDNS's lameduck). */
  lameDuckMs?: number;
}

export class Manager {
  private readonly runnables: Runnable[] = [];
  private readonly started: Runnable[] = [];
  private readonly stopping = new AbortController();
  private draining = false;

  constructor(private readonly log: Logger) {}

  /** Registers a runnable: started after those added before it, stopped before them. */
  add<R extends Runnable>(runnable: R): R {
    this.runnables.push(runnable);
    return runnable;
  }

  /**
   * Starts each runnable in the order added, each once the one before it has started. A stop begun
   * meanwhile ends the start: what finishes starting then is stopped at once.
   */
  async start(): Promise<void> {
    for (const runnable of this.runnables) {
      if (this.stopping.signal.aborted) return;
      try {
        await runnable.start?.(this.stopping.signal);
      } catch (err) {
        throw new Error(`${runnable.name}: ${err instanceof Error ? err.message : String(err)}`, {
          cause: err,
        });
      }
      if (this.stopping.signal.aborted) return this.stopOne(runnable);
      this.started.push(runnable);
      this.log.debug('started', { runnable: runnable.name });
    }
  }

  /** Every runnable started, each ready, and no stop begun. */
  ready(): boolean {
    if (this.draining || this.stopping.signal.aborted) return false;
    if (this.started.length < this.runnables.length) return false;
    return this.runnables.every((r) => r.ready?.() ?? true);
  }

  /**
   * Stops what started, newest first, each once the one after it has stopped (the health endpoint
   * before the servers, the servers before their sources); a failure is logged and the rest stop.
   */
  async stop(): Promise<void> {
    this.stopping.abort();
    for (const runnable of this.started.splice(0).reverse()) await this.stopOne(runnable);
  }

  private async stopOne(runnable: Runnable): Promise<void> {
    try {
      await runnable.stop();
    } catch (err) {
      this.log.warn('stop failed', { runnable: runnable.name, error: err });
    }
  }

  /** Stops everything on the first SIGTERM or SIGINT (signals.ts), then exits. */
  stopOnSignals(opts: SignalOptions): Stop {
    const lameDuck =
      opts.lameDuckMs === undefined
        ? undefined
        : { ms: opts.lameDuckMs, begin: () => (this.draining = true) };
    return stopOnSignals(() => this.stop(), this.log, opts.graceMs, lameDuck);
  }
}
