// A controller's work queue and reconciles, counted under controller-runtime's
// metric names (controller_runtime_reconcile_total, workqueue_depth, …), so
// that dashboards and alerts written for any kubebuilder operator read ours.
// The queue reports events (added, taken, done); the counts are plain fields
// and the queue's state is read when /metrics is scraped.
import { Histogram, registerRead, type Registry } from '../../../runtime/metrics.js';

/** controller-runtime's `result` label of controller_runtime_reconcile_total. */
export type ReconcileResult = 'success' | 'error' | 'requeue' | 'requeue_after';

export interface QueueState {
  /** Keys waiting to be handled. */
  depth: number;
  /** Keys being handled now. */
  active: number;
  /** Seconds spent so far by the keys being handled, summed. */
  unfinishedSeconds: number;
  /** Seconds the longest-running key has been handled so far. */
  longestRunningSeconds: number;
}

/** What a WorkQueue tells its metrics; every method is cheap (a field or a histogram observation). */
export interface QueueObserver {
  /** The queue's state, read when scraped. */
  watch(state: () => QueueState): void;
  /** A key entered the queue (not counted when it was already waiting). */
  added(): void;
  /** A key was taken by a worker after waiting this long. */
  taken(waitedSeconds: number): void;
  /** A key was handled; `terminal` for a TerminalError (not retried). */
  done(seconds: number, result: ReconcileResult, terminal?: boolean): void;
  /** A failed key was scheduled again with backoff. */
  retried(): void;
}

const IDLE: QueueState = { depth: 0, active: 0, unfinishedSeconds: 0, longestRunningSeconds: 0 };

export class ControllerMetrics implements QueueObserver {
  adds = 0;
  retries = 0;
  errors = 0;
  terminalErrors = 0;
  readonly results: Record<ReconcileResult, number> = { success: 0, error: 0, requeue: 0, requeue_after: 0 };
  state: () => QueueState = () => IDLE;

  constructor(
    readonly name: string,
    readonly maxConcurrent: number,
    private readonly histograms: ControllerHistograms,
  ) {}

  watch(state: () => QueueState): void {
    this.state = state;
  }

  added(): void {
    this.adds++;
  }

  taken(waitedSeconds: number): void {
    this.histograms.queueDuration.observe({ name: this.name, controller: this.name }, waitedSeconds);
  }

  done(seconds: number, result: ReconcileResult, terminal = false): void {
    this.results[result]++;
    if (result === 'error') this.errors++;
    if (terminal) this.terminalErrors++;
    this.histograms.workDuration.observe({ name: this.name, controller: this.name }, seconds);
    this.histograms.reconcileTime.observe({ controller: this.name }, seconds);
  }

  retried(): void {
    this.retries++;
  }
}

export interface ControllerHistograms {
  queueDuration: Histogram<'name' | 'controller'>;
  workDuration: Histogram<'name' | 'controller'>;
  reconcileTime: Histogram<'controller'>;
}

/** client-go's workqueue buckets: prometheus.ExponentialBuckets(10e-9, 10, 12). */
const WORKQUEUE_BUCKETS = Array.from({ length: 12 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)));
/** controller-runtime's reconcile_time_seconds buckets. */
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25,
  1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** The histograms every controller shares (one series per controller), and the collectors of the counts. */
export function registerControllerMetrics(
  registry: Registry,
  controllers: ReadonlyMap<string, ControllerMetrics>,
): ControllerHistograms {
  const registers = [registry];
  const perController = (
    name: string,
    help: string,
    value: (c: ControllerMetrics) => number,
    type: 'counter' | 'gauge' = 'counter',
  ) =>
    registerRead(registry, name, help, type, ['controller'], () =>
      [...controllers.values()].map((c) => [{ controller: c.name }, value(c)]),
    );
  const perQueue = (
    name: string,
    help: string,
    value: (c: ControllerMetrics) => number,
    type: 'counter' | 'gauge',
  ) =>
    registerRead(registry, name, help, type, ['name', 'controller'], () =>
      [...controllers.values()].map((c) => [{ name: c.name, controller: c.name }, value(c)]),
    );
  registerRead(
    registry,
    'controller_runtime_reconcile_total',
    'Total number of reconciliations per controller',
    'counter',
    ['controller', 'result'],
    () =>
      [...controllers.values()].flatMap((c) =>
        Object.entries(c.results).map(([result, n]): [Record<string, string>, number] => [
          { controller: c.name, result },
          n,
        ]),
      ),
  );
  perController(
    'controller_runtime_reconcile_errors_total',
    'Total number of reconciliation errors per controller',
    (c) => c.errors,
  );
  perController(
    'controller_runtime_terminal_reconcile_errors_total',
    'Total number of terminal reconciliation errors per controller',
    (c) => c.terminalErrors,
  );
  perController(
    'controller_runtime_active_workers',
    'Number of currently used workers per controller',
    (c) => c.state().active,
    'gauge',
  );
  perController(
    'controller_runtime_max_concurrent_reconciles',
    'Maximum number of concurrent reconciles per controller',
    (c) => c.maxConcurrent,
    'gauge',
  );
  perQueue('workqueue_depth', 'Current depth of workqueue', (c) => c.state().depth, 'gauge');
  perQueue('workqueue_adds_total', 'Total number of adds handled by workqueue', (c) => c.adds, 'counter');
  perQueue(
    'workqueue_retries_total',
    'Total number of retries handled by workqueue',
    (c) => c.retries,
    'counter',
  );
  perQueue(
    'workqueue_unfinished_work_seconds',
    "How many seconds of work has been done that is in progress and hasn't been observed by work_duration.",
    (c) => c.state().unfinishedSeconds,
    'gauge',
  );
  perQueue(
    'workqueue_longest_running_processor_seconds',
    'How many seconds has the longest running processor for workqueue been running.',
    (c) => c.state().longestRunningSeconds,
    'gauge',
  );
  return {
    queueDuration: new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames: ['name', 'controller'],
      buckets: WORKQUEUE_BUCKETS,
      registers,
    }),
    workDuration: new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes.',
      labelNames: ['name', 'controller'],
      buckets: WORKQUEUE_BUCKETS,
      registers,
    }),
    reconcileTime: new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: RECONCILE_BUCKETS,
      registers,
    }),
  };
}
