// The operator's manager, in the shape of controller-runtime's: it owns what
// every controller shares (the management cluster's informers by type, the
// ClusterCache of workload-cluster clients, the one writer of owned objects,
// the write gate, the register of workload watch holds, leader election and
// shards), starts the caches before the controllers, and stops them all.
// Controllers are peers that register with it (add); none builds or exports
// what another uses.
import type { KubeConfig } from '@kubernetes/client-node';
import { CONTROLLER_NAME } from '../../api/index.js';
import { ClusterCache } from './clusters/cache.js';
import { CapiClusterProvider } from './clusters/capi-provider.js';
import { MergedClusterProvider } from './clusters/merged-provider.js';
import { ProfileClusterProvider } from './clusters/profile-provider.js';
import type { KubeconfigPolicy } from './clusters/kubeconfig.js';
import type { ClusterProvider, FleetCluster } from './clusters/provider.js';
import { OwnedObjectWriter } from './clusters/owned-writer.js';
import { WorkloadWatches } from './clusters/workload-watches.js';
import { EventRecorder } from './runtime/events.js';
import { LeaderElector } from './runtime/leader.js';
import { errorText, type Logger } from './runtime/log.js';
import { Metrics } from './runtime/metrics.js';
import { WriteGate, type WriteGateOptions } from './runtime/write-gate.js';
import { Sharder } from './sharding/sharder.js';
import { WHOLE_FLEET, type Share } from './sharding/share.js';
import { ManagementCache } from './management-cache.js';
import type { Runnable } from './runnable.js';

export interface ManagerOptions {
  management: KubeConfig;
  /** Only this management namespace; all when undefined. */
  namespace?: string;
  /** Where the dns-server and its record sets live in every workload cluster. */
  recordsNamespace: string;
  /** This replica: Lease holder identity, Event source, User-Agent. */
  identity: string;
  /** Sent with every request to a workload cluster: names this replica in the API servers' audit logs. */
  userAgent?: string;
  /** What a workload kubeconfig Secret may ask of the operator; strict when undefined. */
  kubeconfigPolicy?: KubeconfigPolicy;
  /** The limits of the writes to workload clusters (runtime/write-gate.ts). */
  writes: WriteGateOptions;
  /** One leader among replicas (client-go's leader election), on this Lease. */
  leaderElection?: { namespace: string; name: string };
  /** Active-active replicas (ADR 0207): this many shards, their Leases in `namespace` named by `group`. */
  sharding?: { namespace: string; group: string; shards: number };
  /** How long a Cluster deleted while paused is still taken as there, frozen (clusters/departures.ts). */
  departedGraceMs?: number;
  /**
   * Where the fleet's clusters come from (ADR 0214): Cluster API's Clusters (the default),
   * SIG Multicluster's ClusterProfiles, or both (a cluster counted once).
   */
  inventory?: Inventory;
  /** ClusterProfiles: namespaces besides a profile's own where its credentials Secret may be read. */
  profileSecretNamespaces?: readonly string[];
  /** ClusterProfiles: the cluster manager whose profiles are this operator's own (left out with both). */
  clusterManager?: string;
  relistMs?: number;
  syncTimeoutMs?: number;
  log: Logger;
}

export type Inventory = 'cluster-api' | 'cluster-profile' | 'both';

export class Manager {
  readonly log: Logger;
  readonly management: KubeConfig;
  readonly recordsNamespace: string;
  readonly metrics: Metrics;
  readonly events: EventRecorder;
  /** The management cluster's informers. */
  readonly cache: ManagementCache;
  /** Where the fleet's clusters come from (Cluster API), as multicluster-runtime's providers. */
  readonly provider: ClusterProvider;
  /** Clients of the workload clusters and their watches. */
  readonly clusters: ClusterCache;
  /** The one writer of every object the operator owns in workload clusters: one memory of its own writes. */
  readonly writer: OwnedObjectWriter;
  /** Which output holds which lazily started Service and EndpointSlice watch. */
  readonly watches: WorkloadWatches;
  /** The management namespaces this replica serves now. */
  readonly share: Share;
  private readonly sharder?: Sharder;
  private readonly elector?: LeaderElector;
  private readonly runnables: Runnable[] = [];
  private started: Runnable[] = [];
  /** Aborted when the manager begins to stop: what a runnable starts later by itself asks it. */
  private readonly stopping = new AbortController();

  constructor(private readonly opts: ManagerOptions) {
    this.log = opts.log;
    this.management = opts.management;
    this.recordsNamespace = opts.recordsNamespace;
    const writeGate = new WriteGate(opts.writes);
    this.metrics = new Metrics(writeGate);
    this.events = new EventRecorder(opts.management, opts.log, opts.identity);
    if (opts.sharding) {
      const sharder = new Sharder({
        kc: opts.management,
        identity: opts.identity,
        log: opts.log,
        ...opts.sharding,
      });
      this.metrics.shards = () => sharder.heldShards.length;
      this.metrics.shardsConfigured = opts.sharding.shards;
      sharder.onChange(() => (this.metrics.shardChanges += 1));
      this.sharder = sharder;
    } else if (opts.leaderElection) {
      this.metrics.leaderElection = { name: opts.leaderElection.name, leading: false };
      this.elector = new LeaderElector({
        kc: opts.management,
        identity: opts.identity,
        log: opts.log,
        ...opts.leaderElection,
      });
    }
    this.share = this.sharder ?? WHOLE_FLEET;
    this.cache = new ManagementCache({
      kc: opts.management,
      namespace: opts.namespace,
      relistMs: opts.relistMs,
    });
    const inventory = opts.inventory ?? 'cluster-api';
    const capi = () =>
      new CapiClusterProvider({
        cache: this.cache,
        kc: opts.management,
        namespace: opts.namespace,
        relistMs: opts.relistMs,
        departedGraceMs: opts.departedGraceMs,
        log: opts.log,
      });
    const profiles = () =>
      new ProfileClusterProvider({
        cache: this.cache,
        kc: opts.management,
        otherSecretNamespaces: opts.profileSecretNamespaces,
        skipClusterManager: inventory === 'both' ? opts.clusterManager : undefined,
        log: opts.log,
      });
    const provider: ClusterProvider =
      inventory === 'cluster-api'
        ? capi()
        : inventory === 'cluster-profile'
          ? profiles()
          : new MergedClusterProvider(capi(), profiles());
    this.provider = provider;
    this.clusters = new ClusterCache({
      provider,
      kubeconfigPolicy: opts.kubeconfigPolicy,
      writeGate,
      share: this.share,
      userAgent: opts.userAgent,
      log: opts.log,
      relistMs: opts.relistMs,
    });
    provider.onCredentialsChange((namespace, cluster) =>
      this.clusters.credentialsChanged(namespace, cluster),
    );
    this.writer = new OwnedObjectWriter({ fieldManager: CONTROLLER_NAME, requestTimeoutMs: 10_000 });
    this.watches = new WorkloadWatches({ clusters: this.clusters, log: opts.log });
    // Registered before any controller's handler: a deleted Cluster's client is dropped before a
    // controller reacts to the same change.
    provider.onChange((type, cluster) => {
      if (type === 'delete')
        this.clusters.remove(cluster.metadata?.namespace ?? '', cluster.metadata?.name ?? '');
    });
    this.metrics.clusters = () => this.clusters.connected().map((c) => ({ key: c.key, healthy: c.healthy }));
  }

  /** Registers a controller: started once the caches have synced, stopped on shutdown (in reverse order). */
  add(runnable: Runnable): void {
    this.runnables.push(runnable);
  }

  /** A cluster of the fleet, or one gone but still kept, frozen (a paused Cluster moved away). */
  clusterNamed(namespace: string, name: string): FleetCluster | undefined {
    return this.provider.getKept(namespace, name);
  }

  /** The clusters of a namespace, those gone but still kept, frozen, too. */
  clustersOf(namespace: string): readonly FleetCluster[] {
    return this.provider.listKept(namespace);
  }

  /**
   * As controller-runtime's manager: starts the caches and waits for them to sync first, so that a
   * standby replica that wins the lease later starts warm; then leads (when elected: onLost is
   * called if it stops leading later), then starts the controllers, then takes shards: a shard
   * gained enqueues from controllers that are listening, with synced caches.
   */
  async start(onLostLeadership: () => void): Promise<void> {
    await this.cache.start(this.opts.syncTimeoutMs ?? 30_000);
    if (this.elector) {
      const election = this.metrics.leaderElection;
      await this.elector.run(() => {
        if (election) election.leading = false;
        onLostLeadership();
      });
      if (election) election.leading = true;
    }
    for (const runnable of this.runnables) {
      await runnable.start?.(this.stopping.signal);
      this.started.push(runnable);
      this.log.debug('controller started', { controller: runnable.name });
    }
    await this.sharder?.start();
  }

  /** Ready for traffic: a standby replica when it reaches the API server, else once the caches synced. */
  ready(): boolean {
    return this.elector && !this.elector.leading ? this.elector.apiReachable : this.cache.synced;
  }

  /** Controllers first (newest first), then caches and clients, then the shards and the lease go to the others. */
  async stop(): Promise<void> {
    const warn = (what: string) => (err: unknown) =>
      this.log.warn('stop failed', { component: what, error: errorText(err) });
    this.stopping.abort();
    for (const runnable of this.started.reverse())
      await Promise.resolve()
        .then(() => runnable.stop())
        .catch(warn(runnable.name));
    this.started = [];
    this.provider.stop();
    await Promise.all([this.cache.stop().catch(warn('cache')), this.clusters.stop().catch(warn('clusters'))]);
    // After the work stopped: the shards go to the others at once, with nothing of ours in flight.
    await this.sharder?.stop().catch(warn('shards'));
    await this.elector?.release();
  }
}
