// The fence of ADR 0207: a shard is served only while this replica holds
// its Lease. Each wanted shard's Lease is acquired (once its previous holder
// released it or let it expire) and renewed every retry period; holds(shard)
// turns false the moment the last successful renewal is older than the renew
// deadline, which is shorter than the lease's duration, so this replica has
// stopped acting for the shard before anyone else may take it (leader
// election's rule, per shard). A shard no longer wanted is first dropped
// (onLost), then its Lease released, so its next holder starts at once.
import { CoordinationV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { withTimeout } from '../runtime/equal.js';
import { WatchedResource } from '../runtime/informer.js';
import { LeaseLock, LeaseSightings } from '../runtime/lease-lock.js';
import { errorText, type Logger } from '../runtime/log.js';

/** The label every shard Lease carries, its value the controller's name. */
export const SHARD_LABEL = 'capi-dns.io/shard-of';

export function shardLeaseName(group: string, shard: number): string {
  return `${group}-shard-${shard}`;
}

export interface ShardLeasesOptions {
  kc: KubeConfig;
  namespace: string;
  identity: string;
  group: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  log: Logger;
  /** This replica now holds the shard: serve it. */
  onHeld: (shard: number) => void;
  /** This replica no longer holds the shard (lost, or given up): stop writing for it now. */
  onLost: (shard: number) => void;
}

interface ShardState {
  lock: LeaseLock;
  held: boolean;
  renewedAt: number;
}

export class ShardLeases {
  private readonly shards = new Map<number, ShardState>();
  private readonly durationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private timer?: NodeJS.Timeout;
  private fenceTimer?: NodeJS.Timeout;
  private running = false;
  private ticking?: Promise<void>;
  /** Every shard Lease, watched: when this replica first saw each holder and renewTime. */
  private readonly leases: WatchedResource<V1Lease>;
  private readonly sightings = new LeaseSightings();

  constructor(private readonly opts: ShardLeasesOptions) {
    this.durationMs = opts.leaseDurationMs ?? 10_000;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 7_000;
    this.retryPeriodMs = opts.retryPeriodMs ?? 2_000;
    if (this.renewDeadlineMs >= this.durationMs)
      throw new Error(
        `shard leases: the renew deadline (${this.renewDeadlineMs} ms) must be shorter than the lease duration (${this.durationMs} ms)`,
      );
    const api = opts.kc.makeApiClient(CoordinationV1Api);
    const labelSelector = `${SHARD_LABEL}=${opts.group}`;
    this.leases = new WatchedResource<V1Lease>({
      kc: opts.kc,
      path: `/apis/coordination.k8s.io/v1/namespaces/${opts.namespace}/leases`,
      labelSelector,
      list: () => api.listNamespacedLease({ namespace: opts.namespace, labelSelector }),
    });
    this.leases.onChange((type, lease) => {
      const name = lease.metadata?.name ?? '';
      if (type === 'delete') return this.sightings.forget(name);
      this.sightings.observe(lease);
      // A wanted shard given up by its holder: take it now rather than at the next round.
      if (
        !lease.spec?.holderIdentity &&
        this.running &&
        [...this.shards.keys()].some((shard) => shardLeaseName(this.opts.group, shard) === name)
      )
        this.schedule(0);
    });
  }

  /** Serving the shard is allowed now: held, and renewed within the renew deadline. */
  holds(shard: number): boolean {
    const s = this.shards.get(shard);
    return !!s && s.held && Date.now() - s.renewedAt <= this.renewDeadlineMs;
  }

  /** The shards held now, ascending. */
  held(): number[] {
    return [...this.shards.keys()].filter((k) => this.holds(k)).sort((a, b) => a - b);
  }

  /** Watches the shard Leases, then contends for the wanted ones. */
  async start(): Promise<void> {
    this.leases.start();
    await this.leases.waitForFirstAttempt();
    this.running = true;
    this.schedule(0);
  }

  /** The shards this replica is assigned: others are dropped and released, new ones contended for at once. */
  async want(wanted: Iterable<number>): Promise<void> {
    const next = new Set(wanted);
    const dropped: ShardState[] = [];
    for (const [shard, s] of this.shards) {
      if (next.has(shard)) continue;
      this.shards.delete(shard);
      if (s.held) {
        s.held = false;
        this.opts.onLost(shard);
        dropped.push(s);
      }
    }
    for (const shard of next)
      if (!this.shards.has(shard))
        this.shards.set(shard, {
          lock: new LeaseLock({
            kc: this.opts.kc,
            namespace: this.opts.namespace,
            name: shardLeaseName(this.opts.group, shard),
            identity: this.opts.identity,
            leaseDurationMs: this.durationMs,
            labels: { [SHARD_LABEL]: this.opts.group },
            sightings: this.sightings,
          }),
          held: false,
          renewedAt: 0,
        });
    await Promise.all(dropped.map((s) => this.release(s)));
    if (this.running) this.schedule(0);
  }

  /** Drops every shard and releases its Lease (a clean shutdown). */
  async stop(): Promise<void> {
    await this.want([]);
    await this.halt();
  }

  /** Stops renewing without a word, as a crashed replica would (tests of takeover use it alone). */
  async halt(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    clearTimeout(this.fenceTimer);
    await this.leases.stop();
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
  }

  private async tick(): Promise<void> {
    if (!this.running) return;
    // One round at a time: a slow API server must not pile rounds up.
    if (this.ticking) return;
    this.ticking = Promise.all(
      [...this.shards].map(async ([shard, s]) => {
        const ok = await withTimeout(
          s.lock.acquireOrRenew(),
          this.renewDeadlineMs,
          'shard lease request',
        ).catch((err: unknown) => {
          this.opts.log.warn('sharding: shard lease request failed', {
            lease: s.lock.name,
            error: errorText(err),
          });
          return false;
        });
        if (this.shards.get(shard) !== s) return; // dropped meanwhile
        if (ok) {
          s.renewedAt = Date.now();
          if (!s.held) {
            s.held = true;
            this.opts.log.info('sharding: holding shard', { shard, lease: s.lock.name });
            this.opts.onHeld(shard);
          }
        }
      }),
    ).then(() => undefined);
    await this.ticking;
    this.ticking = undefined;
    this.fence();
    if (this.running) this.schedule(this.retryPeriodMs);
  }

  /** A held shard whose renewal is past the deadline is dropped now, not at the next round. */
  private fence(): void {
    clearTimeout(this.fenceTimer);
    let next = Infinity;
    for (const [shard, s] of this.shards) {
      if (!s.held) continue;
      const left = s.renewedAt + this.renewDeadlineMs - Date.now();
      if (left < 0) {
        s.held = false;
        this.opts.log.error('sharding: lost shard (no renewal within the renew deadline)', {
          shard,
          lease: s.lock.name,
        });
        this.opts.onLost(shard);
      } else next = Math.min(next, left);
    }
    if (next !== Infinity && this.running) this.fenceTimer = setTimeout(() => this.fence(), next + 1);
  }

  private async release(s: ShardState): Promise<void> {
    try {
      await s.lock.release();
    } catch (err) {
      // Not released: the next holder waits for the lease to expire instead.
      this.opts.log.warn('sharding: could not release shard lease', {
        lease: s.lock.name,
        error: errorText(err),
      });
    }
  }
}
