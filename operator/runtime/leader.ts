// Leader election on a coordination.k8s.io/v1 Lease, as client-go's
// leaderelection does it: the holder renews every retryPeriod; another
// replica takes over once it has seen the same renewTime for leaseDuration
// (measured on its own clock, so clocks need not agree). A leader that cannot
// renew within renewDeadline stops leading (the process exits), so two never act at once for long.
import { CoordinationV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { withTimeout } from './equal.js';
import { errorText, httpStatus, type Logger } from './log.js';

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
  private readonly api: CoordinationV1Api;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private observed?: { holder: string; renewTime: string; at: number };
  private lastRenew = 0;
  private stopped = false;
  private timer?: NodeJS.Timeout;
  leading = false;
  /** The last attempt reached the API server (a standby replica is "ready" then). */
  apiReachable = false;

  constructor(private readonly opts: LeaderElectionOptions) {
    this.api = opts.kc.makeApiClient(CoordinationV1Api);
    this.leaseDurationMs = opts.leaseDurationMs ?? 10_000;
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
        const ok = await withTimeout(this.tryAcquireOrRenew(), this.renewDeadlineMs, 'lease request').catch(
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
            lease: this.leaseName(),
            identity: this.opts.identity,
          });
          resolve();
        }
        if (wasLeading && !ok && Date.now() - this.lastRenew > this.renewDeadlineMs) {
          this.leading = false;
          this.opts.log.error('leader election: lost the lease', { lease: this.leaseName() });
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
      const lease = await this.api.readNamespacedLease({
        name: this.opts.name,
        namespace: this.opts.namespace,
      });
      if (lease.spec?.holderIdentity !== this.opts.identity) return;
      lease.spec = {
        ...lease.spec,
        holderIdentity: undefined,
        leaseDurationSeconds: 1,
        renewTime: microTime(new Date()),
      };
      await this.api.replaceNamespacedLease({
        name: this.opts.name,
        namespace: this.opts.namespace,
        body: lease,
      });
    } catch (err) {
      this.opts.log.warn('leader election: could not release the lease', { error: errorText(err) });
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity } = this.opts;
    const now = new Date();
    let lease: V1Lease;
    try {
      lease = await this.api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (httpStatus(err) !== 404) throw err;
      await this.api.createNamespacedLease({
        namespace,
        body: { metadata: { name, namespace }, spec: this.spec(now, 0) },
      });
      this.apiReachable = true;
      return true;
    }
    this.apiReachable = true;
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const renewTime = String(spec.renewTime ?? '');
    if (!this.observed || this.observed.holder !== holder || this.observed.renewTime !== renewTime)
      this.observed = { holder, renewTime, at: Date.now() };
    const durationMs = (spec.leaseDurationSeconds ?? this.leaseDurationMs / 1000) * 1000;
    const expired = Date.now() - this.observed.at > durationMs;
    if (holder && holder !== identity && !expired) return false;
    const transitions = (spec.leaseTransitions ?? 0) + (holder === identity ? 0 : 1);
    lease.spec = {
      ...this.spec(now, transitions),
      acquireTime: holder === identity && spec.acquireTime ? spec.acquireTime : microTime(now),
    };
    // replace carries the resourceVersion read above: if another replica wrote meanwhile, this fails with 409.
    try {
      await this.api.replaceNamespacedLease({ name, namespace, body: lease });
    } catch (err) {
      if (httpStatus(err) === 409) return false;
      throw err;
    }
    return true;
  }

  private spec(now: Date, transitions: number): V1Lease['spec'] {
    return {
      holderIdentity: this.opts.identity,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: transitions,
    };
  }

  private leaseName(): string {
    return `${this.opts.namespace}/${this.opts.name}`;
  }
}

/**
 * A Lease's times are MicroTime (RFC 3339 with exactly six fractional digits).
 * client-node types them as Date but passes strings through unchanged, and a
 * Date would be sent with three digits, which the API server rejects.
 */
function microTime(d: Date): Date {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z') as unknown as Date;
}
