// A replica's share of the fleet (ADR 0207): the live members (membership.ts)
// → the shards this replica is assigned (assignment.ts) → the shards whose
// Lease it holds (shard-leases.ts). owns(namespace) is the one question the
// controllers ask, right before they act for a namespace's clusters; onChange
// tells them to look again when the answer changes for some namespaces.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../runtime/log.js';
import { shardOfNamespace, shardsOf } from './assignment.js';
import { Membership } from './membership.js';
import { ShardLeases } from './shard-leases.js';
import type { Share } from './share.js';

export interface SharderOptions {
  kc: KubeConfig;
  /** Where the member and shard Leases live (the leader-election namespace). */
  namespace: string;
  identity: string;
  /** Names the Leases: replicas of one deployment share it. */
  group: string;
  /** Shards of the fleet; fixed for its life (a change moves nearly every cluster). */
  shards: number;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /**
   * How long a starting replica watches the members before it takes its first shards (default 2 s,
   * one renewal): replicas started together (a fresh install) then each take their own share,
   * rather than the first one up taking every shard and handing most back a moment later.
   */
  settleMs?: number;
  log: Logger;
}

export class Sharder implements Share {
  private readonly membership: Membership;
  private readonly leases: ShardLeases;
  private readonly listeners: ((shard: number, held: boolean) => void)[] = [];
  private assigned: number[] = [];
  private settled = false;
  private settleTimer?: NodeJS.Timeout;

  constructor(private readonly opts: SharderOptions) {
    if (!Number.isInteger(opts.shards) || opts.shards < 1)
      throw new Error(`sharding: --shards must be a positive integer, not ${opts.shards}`);
    this.leases = new ShardLeases({
      ...opts,
      onHeld: (shard) => this.listeners.forEach((l) => l(shard, true)),
      onLost: (shard) => this.listeners.forEach((l) => l(shard, false)),
    });
    this.membership = new Membership({
      ...opts,
      onChange: (members) => void this.reassign(members),
    });
  }

  /** Called when this replica gains (held true) or loses a shard: `affected` says which namespaces are in it. */
  onChange(listener: (affected: (namespace: string) => boolean, held: boolean) => void): void {
    this.listeners.push((shard, held) => listener((namespace) => this.shardOf(namespace) === shard, held));
  }

  shardOf(namespace: string): number {
    return shardOfNamespace(namespace, this.opts.shards);
  }

  /** This replica may act for the namespace now (it holds the namespace's shard Lease, renewed in time). */
  owns(namespace: string): boolean {
    return this.leases.holds(this.shardOf(namespace));
  }

  /** The shards assigned to this replica by the members it sees (held or being acquired). */
  get assignedShards(): number[] {
    return this.assigned;
  }

  get heldShards(): number[] {
    return this.leases.held();
  }

  get members(): string[] {
    return this.membership.members;
  }

  async start(): Promise<void> {
    await this.leases.start();
    await this.membership.start();
    this.settleTimer = setTimeout(() => {
      this.settled = true;
      void this.reassign(this.membership.members);
    }, this.opts.settleMs ?? 2_000);
  }

  /** Gives every shard up and leaves: the other replicas take its share at once. */
  async stop(): Promise<void> {
    clearTimeout(this.settleTimer);
    await this.leases.stop();
    await this.membership.stop();
  }

  /** Stops without a word, as a crash would (tests of takeover). */
  async halt(): Promise<void> {
    clearTimeout(this.settleTimer);
    await this.leases.halt();
    await this.membership.halt();
  }

  private async reassign(members: string[]): Promise<void> {
    if (!this.settled) return;
    // Until this replica counts itself (its own Lease renewed), it serves nothing.
    const mine = members.includes(this.opts.identity)
      ? shardsOf(this.opts.identity, members, this.opts.shards)
      : [];
    this.assigned = mine;
    this.opts.log.info('sharding: assigned shards', { members, shards: mine });
    await this.leases.want(mine);
  }
}
