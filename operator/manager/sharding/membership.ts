// Which replicas are alive (ADR 0207): each renews a Lease of its own,
// labelled as a member, and watches the others'. A member is live while this
// replica has seen its renewTime change within the lease's duration, on its
// own clock (as leader election judges a holder); a member that stops
// deletes its Lease, so the others rebalance at once instead of after the
// duration. Watches trigger; a timer set to the next expiry notices a member
// that died without a word (no event comes for silence).
import { CoordinationV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import { WatchedResource } from '../runtime/informer.js';
import { LeaseLock, LeaseSightings } from '../runtime/lease-lock.js';
import { errorText, httpStatus, type Logger } from '../runtime/log.js';

/** The label every member Lease carries, its value the controller's name. */
export const MEMBER_LABEL = 'capi-dns.io/member-of';

export interface MembershipOptions {
  kc: KubeConfig;
  namespace: string;
  /** The replica's identity (its Pod name): the holder of its Lease. */
  identity: string;
  /** The value of MEMBER_LABEL: replicas of one deployment share it. */
  group: string;
  leaseDurationMs?: number;
  renewPeriodMs?: number;
  log: Logger;
  /** Called with the live members (sorted) whenever they change. */
  onChange: (members: string[]) => void;
}

/** A Lease name for an identity: a DNS subdomain whatever the identity holds. */
export function memberLeaseName(group: string, identity: string): string {
  const clean = identity
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 40)
    .replace(/^-+|-+$/g, '');
  const suffix = createHash('sha256').update(identity).digest('hex').slice(0, 8);
  return `${group}-member-${clean ? `${clean}-` : ''}${suffix}`;
}

export class Membership {
  private readonly lock: LeaseLock;
  private readonly api: CoordinationV1Api;
  private readonly leases: WatchedResource<V1Lease>;
  private readonly durationMs: number;
  private readonly renewPeriodMs: number;
  private readonly sightings = new LeaseSightings();
  /** Expired member Leases being deleted (collect). */
  private readonly collecting = new Set<string>();
  private current: string[] = [];
  private renewTimer?: NodeJS.Timeout;
  private expiryTimer?: NodeJS.Timeout;
  private stopped = false;
  /** This replica's own Lease was renewed within the duration. */
  private renewedAt = 0;

  constructor(private readonly opts: MembershipOptions) {
    this.durationMs = opts.leaseDurationMs ?? 10_000;
    this.renewPeriodMs = opts.renewPeriodMs ?? 2_000;
    this.lock = new LeaseLock({
      kc: opts.kc,
      namespace: opts.namespace,
      name: memberLeaseName(opts.group, opts.identity),
      identity: opts.identity,
      leaseDurationMs: this.durationMs,
      labels: { [MEMBER_LABEL]: opts.group },
    });
    this.api = opts.kc.makeApiClient(CoordinationV1Api);
    const labelSelector = `${MEMBER_LABEL}=${opts.group}`;
    this.leases = new WatchedResource<V1Lease>({
      kc: opts.kc,
      path: `/apis/coordination.k8s.io/v1/namespaces/${opts.namespace}/leases`,
      labelSelector,
      list: () => this.api.listNamespacedLease({ namespace: opts.namespace, labelSelector }),
    });
    this.leases.onChange(() => this.recompute());
    this.leases.onSynced(() => this.recompute());
  }

  /** The live members, sorted (this replica among them once its own Lease is renewed). */
  get members(): string[] {
    return this.current;
  }

  /** Renews this replica's Lease and watches the others'; resolves once both have happened once. */
  async start(): Promise<void> {
    await this.renew();
    this.leases.start();
    await this.leases.waitForFirstAttempt();
    this.recompute();
  }

  /** Stops renewing and deletes this replica's Lease: the others take its shards at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.renewTimer);
    clearTimeout(this.expiryTimer);
    await this.leases.stop();
    try {
      await this.api.deleteNamespacedLease({
        namespace: this.opts.namespace,
        name: memberLeaseName(this.opts.group, this.opts.identity),
      });
    } catch (err) {
      if (httpStatus(err) !== 404)
        this.opts.log.warn('membership: could not delete this replica’s Lease', { error: errorText(err) });
    }
  }

  /** Stops renewing and watching without a word, as a crash would: the Lease stays to expire. */
  async halt(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.renewTimer);
    clearTimeout(this.expiryTimer);
    await this.leases.stop();
  }

  private async renew(): Promise<void> {
    if (this.stopped) return;
    try {
      if (await this.lock.acquireOrRenew()) this.renewedAt = Date.now();
      else
        this.opts.log.error('membership: another process holds this replica’s Lease', {
          lease: this.lock.name,
        });
    } catch (err) {
      this.opts.log.warn('membership: renewing this replica’s Lease failed', {
        lease: this.lock.name,
        error: errorText(err),
      });
    }
    this.recompute();
    this.renewTimer = setTimeout(() => void this.renew(), this.renewPeriodMs);
  }

  /**
   * A member Lease this replica has seen go unrenewed for its whole duration is deleted, on the
   * condition that it is still the version seen (a late renewal wins): a replica starting later
   * then does not count the dead one live for a lease duration of its own before it takes its share.
   */
  private collect(lease: V1Lease): void {
    const name = lease.metadata?.name ?? '';
    const resourceVersion = lease.metadata?.resourceVersion;
    if (!name || !resourceVersion || this.collecting.has(name) || this.stopped) return;
    this.collecting.add(name);
    this.api
      .deleteNamespacedLease({
        namespace: this.opts.namespace,
        name,
        body: { preconditions: { resourceVersion } },
      })
      .then(
        () =>
          this.opts.log.info('membership: expired member Lease deleted', {
            lease: name,
            holder: lease.spec?.holderIdentity,
          }),
        (err: unknown) => {
          // 404: another member was first; 409: it was renewed after all.
          if (httpStatus(err) !== 404 && httpStatus(err) !== 409)
            this.opts.log.warn('membership: could not delete an expired member Lease', {
              lease: name,
              error: errorText(err),
            });
        },
      )
      .finally(() => this.collecting.delete(name));
  }

  private recompute(): void {
    if (this.stopped) return;
    const now = Date.now();
    const live = new Set<string>();
    let nextExpiry = Infinity;
    const names = new Set<string>();
    for (const lease of this.leases.list()) {
      const name = lease.metadata?.name ?? '';
      names.add(name);
      const holder = lease.spec?.holderIdentity ?? '';
      const seenAt = this.sightings.observe(lease, now);
      const durationMs = (lease.spec?.leaseDurationSeconds ?? this.durationMs / 1000) * 1000;
      if (!holder) continue;
      if (now - seenAt > durationMs) {
        this.collect(lease);
        continue;
      }
      live.add(holder);
      nextExpiry = Math.min(nextExpiry, seenAt + durationMs);
    }
    this.sightings.keepOnly(names);
    // This replica counts itself while its own renewals succeed, whatever its watch has shown yet.
    if (now - this.renewedAt <= this.durationMs) live.add(this.opts.identity);
    else live.delete(this.opts.identity);
    const members = [...live].sort();
    if (members.join('\n') !== this.current.join('\n')) {
      this.current = members;
      this.opts.log.info('membership: live replicas changed', { members });
      this.opts.onChange(members);
    }
    clearTimeout(this.expiryTimer);
    if (nextExpiry !== Infinity) this.expiryTimer = setTimeout(() => this.recompute(), nextExpiry - now + 50);
  }
}
