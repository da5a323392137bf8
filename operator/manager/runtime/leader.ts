// Leader election on a coordination.k8s.io/v1 Lease, as client-go's
// leaderelection does it: the holder renews every retryPeriod; another
// replica takes over once it has seen the same renewTime for leaseDuration
// (measured on its own clock, so clocks need not agree). A leader that cannot
// renew within renewDeadline stops leading (the process exits), so two never act at once for long.
import type { KubeConfig } from '@kubernetes/client-node';
import { withTimeout } from './equal.js';
import { LeaseLock } from './lease-lock.js';
import { errorText, type Logger } from './log.js';

export interface LeaderElectionOptions {
  kc: KubeConfig;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  log: Logger;
}

export class LeaderElector {
  private readonly lock: LeaseLock;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private lastRenew = 0;
  private stopped = false;
  private timer?: NodeJS.Timeout;
  leading = false;
  /** The last attempt reached the API server (a standby replica is "ready" then). */
  apiReachable = false;

  constructor(private readonly opts: LeaderElectionOptions) {
    this.lock = new LeaseLock({ ...opts, leaseDurationMs: opts.leaseDurationMs ?? 10_000 });
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 8_000;
    this.retryPeriodMs = opts.retryPeriodMs ?? 2_000;
  }

  /** Resolves when this replica leads; onLost is called if it stops leading later. */
  async run(onLost: () => void): Promise<void> {
    await new Promise<void>((resolve) => {
      const tick = async () => {
        if (this.stopped) return;
        const wasLeading = this.leading;
        // Bounded like client-go's renew deadline: a hanging API server must not stall the loop, or
        // this replica would go on leading after a standby has taken the lease over.
        const ok = await withTimeout(this.lock.acquireOrRenew(), this.renewDeadlineMs, 'lease request').then(
          (held) => {
            this.apiReachable = true;
            return held;
          },
          (err: unknown) => {
            this.apiReachable = false;
            this.opts.log.warn('leader election: lease request failed', { error: errorText(err) });
            return false;
          },
        );
        if (ok) this.lastRenew = Date.now();
        if (ok && !wasLeading) {
          this.leading = true;
          this.opts.log.info('leader election: became leader', {
            lease: this.lock.name,
            identity: this.opts.identity,
          });
          resolve();
        }
        if (wasLeading && !ok && Date.now() - this.lastRenew > this.renewDeadlineMs) {
          this.leading = false;
          this.opts.log.error('leader election: lost the lease', { lease: this.lock.name });
          onLost();
          return;
        }
        this.timer = setTimeout(
          () => void tick(),
          this.retryPeriodMs * (this.leading ? 1 : 0.8 + Math.random() * 0.4),
        );
      };
      void tick();
    });
  }

  /** Gives the lease up so that a standby takes over at once instead of after leaseDuration. */
  async release(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (!this.leading) return;
    this.leading = false;
    try {
      await this.lock.release();
    } catch (err) {
      this.opts.log.warn('leader election: could not release the lease', { error: errorText(err) });
    }
  }
}
