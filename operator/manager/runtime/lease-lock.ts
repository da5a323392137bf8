// One coordination.k8s.io/v1 Lease held the way client-go's resourcelock
// holds it: whoever holds it renews renewTime; another identity may take it
// only after it has seen the same holder and renewTime for the lease's
// duration on its own clock (so clocks need not agree), or once the holder has
// released it. Every write carries the resourceVersion it read, so two
// contenders never both succeed. The leader elector holds one; the shards of
// ADR 0207 hold one each.
import { CoordinationV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { httpStatus } from './log.js';

export interface LeaseLockOptions {
  kc: KubeConfig;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  /** Labels the Lease is created with (shards and members are found by them). */
  labels?: Record<string, string>;
  /**
   * Shared with a watch of the Lease, if there is one: the duration then runs from when the watch
   * first saw the holder's renewTime, not from this lock's first read (a replica assigned a dead
   * replica's shard need not wait a second duration).
   */
  sightings?: LeaseSightings;
}

/**
 * When this process first saw each Lease's current holder and renewTime: the clock a Lease's
 * duration runs on, since clocks of other processes need not agree with this one.
 */
export class LeaseSightings {
  private readonly seen = new Map<string, { holder: string; renewTime: string; at: number }>();

  /** Notes the Lease as it is now; returns when its current holder and renewTime were first seen. */
  observe(lease: V1Lease, now = Date.now()): number {
    const name = lease.metadata?.name ?? '';
    const holder = lease.spec?.holderIdentity ?? '';
    const renewTime = String(lease.spec?.renewTime ?? '');
    const prior = this.seen.get(name);
    if (prior && prior.holder === holder && prior.renewTime === renewTime) return prior.at;
    this.seen.set(name, { holder, renewTime, at: now });
    return now;
  }

  forget(name: string): void {
    this.seen.delete(name);
  }

  /** Forgets every Lease but these (those that are gone). */
  keepOnly(names: ReadonlySet<string>): void {
    for (const name of this.seen.keys()) if (!names.has(name)) this.seen.delete(name);
  }
}

export class LeaseLock {
  private readonly api: CoordinationV1Api;
  private readonly sightings: LeaseSightings;
  /** The Lease as our own last create or replace returned it, until the next renewal uses it. */
  private lastWritten?: V1Lease;

  constructor(private readonly opts: LeaseLockOptions) {
    this.api = opts.kc.makeApiClient(CoordinationV1Api);
    this.sightings = opts.sightings ?? new LeaseSightings();
  }

  get name(): string {
    return `${this.opts.namespace}/${this.opts.name}`;
  }

  /**
   * Acquires the Lease or renews it: true when this identity holds it now, false when another does
   * (or won a race for it). Throws when the API server cannot be asked.
   */
  async acquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity } = this.opts;
    const now = new Date();
    // Renewing from the copy our own last write returned saves a read a renewal (the replace still
    // carries its resourceVersion: if anyone wrote since, it fails, and the Lease is read afresh).
    const ours = this.lastWritten;
    this.lastWritten = undefined;
    let lease: V1Lease;
    if (ours) lease = ours;
    else
      try {
        lease = await this.api.readNamespacedLease({ name, namespace });
      } catch (err) {
        if (httpStatus(err) !== 404) throw err;
        try {
          this.lastWritten = await this.api.createNamespacedLease({
            namespace,
            body: { metadata: { name, namespace, labels: this.opts.labels }, spec: this.spec(now, 0) },
          });
        } catch (createErr) {
          // Another identity created it first: it holds it.
          if (httpStatus(createErr) === 409) return false;
          throw createErr;
        }
        return true;
      }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const seenAt = this.sightings.observe(lease);
    const durationMs = (spec.leaseDurationSeconds ?? this.opts.leaseDurationMs / 1000) * 1000;
    const expired = Date.now() - seenAt > durationMs;
    if (holder && holder !== identity && !expired) return false;
    const transitions = (spec.leaseTransitions ?? 0) + (holder === identity ? 0 : 1);
    lease.spec = {
      ...this.spec(now, transitions),
      acquireTime: holder === identity && spec.acquireTime ? spec.acquireTime : microTime(now),
    };
    // replace carries the resourceVersion read above: if another identity wrote meanwhile, this fails with 409.
    try {
      this.lastWritten = await this.api.replaceNamespacedLease({ name, namespace, body: lease });
    } catch (err) {
      if (httpStatus(err) !== 409) throw err;
      // Written by someone since our own copy: read it and decide again.
      return ours ? this.acquireOrRenew() : false;
    }
    return true;
  }

  /**
   * Gives the Lease up (no holder, a one-second duration) if this identity still holds it, so that
   * the next holder need not wait out the duration. The caller has stopped acting for it first.
   */
  async release(): Promise<void> {
    const { namespace, name, identity } = this.opts;
    this.lastWritten = undefined;
    const lease = await this.api.readNamespacedLease({ name, namespace });
    if (lease.spec?.holderIdentity !== identity) return;
    lease.spec = {
      ...lease.spec,
      holderIdentity: undefined,
      leaseDurationSeconds: 1,
      renewTime: microTime(new Date()),
    };
    await this.api.replaceNamespacedLease({ name, namespace, body: lease });
  }

  private spec(now: Date, transitions: number): V1Lease['spec'] {
    return {
      holderIdentity: this.opts.identity,
      leaseDurationSeconds: Math.ceil(this.opts.leaseDurationMs / 1000),
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: transitions,
    };
  }
}

/**
 * A Lease's times are MicroTime (RFC 3339 with exactly six fractional digits).
 * client-node types them as Date but passes strings through unchanged, and a
 * Date would be sent with three digits, which the API server rejects.
 */
export function microTime(d: Date): Date {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z') as unknown as Date;
}
