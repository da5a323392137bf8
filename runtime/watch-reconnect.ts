// When to re-open a Kubernetes watch that ended without an error.
//
// @kubernetes/client-node 2.x's ListWatch waits before re-opening such a watch,
// and doubles the wait at every end (1 s, 2 s, … 30 s), resetting it only after
// its own 30 s inactivity timeout. A busy watch that the API server ends every
// half hour, as it does by design (--min-request-timeout), would after a few
// ends leave up to 30 s in which changes wait: our sub-second propagation gone.
// The delay exists against an API server that ends watches at once; so a watch
// that lived long re-opens at once, and only short-lived ones keep the delay.
// Errors are not this policy's business: ListWatch stops on them, and our
// wrappers restart it with their own backoff.
import { setTimeout as sleep } from 'node:timers/promises';

export class WatchReconnectPolicy {
  private lastConnectAt = Number.NEGATIVE_INFINITY;
  private previousConnectAt = Number.NEGATIVE_INFINITY;

  constructor(
    /** A watch that lived this long was healthy: re-open it at once. */
    private readonly healthyAfterMs = 5_000,
    private readonly now: () => number = Date.now,
    private readonly wait: (ms: number) => Promise<unknown> = sleep,
  ) {}

  /** For informer.on('connect'): ListWatch calls it each time it (re)starts a watch. */
  readonly connected = (): void => {
    this.previousConnectAt = this.lastConnectAt;
    this.lastConnectAt = this.now();
  };

  /** ListWatchOptions.delayFn: called with ListWatch's own delay before a re-open. */
  readonly delayFn = async (ms: number): Promise<void> => {
    if (this.lastConnectAt - this.previousConnectAt >= this.healthyAfterMs) return;
    await this.wait(ms);
  };
}
