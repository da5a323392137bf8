// The ClusterProfile controller (--cluster-profiles=produce): the fleet's
// Clusters (through the manager's ClusterProvider), their kubeconfig Secrets,
// the management Namespaces (their ClusterSet label) and the ClusterProfiles
// themselves only enqueue "<namespace>/<cluster>" keys; a work queue runs the
// reconciles (reconciler.ts). Each namespace's Clusters are reconciled by the
// replica serving its shard (ADR 0207).
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ClusterProfile } from '../../api/index.js';
import { clusterSetOf } from '../model/clusterset.js';
import type { Manager } from '../manager/manager.js';
import type { Runnable } from '../manager/runnable.js';
import { CLUSTERS } from '../manager/clusters/capi-provider.js';
import type { WatchedResource } from '../manager/runtime/informer.js';
import { errorText } from '../manager/runtime/log.js';
import { namespaceOfKey, WorkQueue } from '../manager/runtime/workqueue.js';
import { CLUSTER_PROFILES } from './kinds.js';
import { ProfileMetrics } from './metrics.js';
import { ClusterProfilePatcher } from './patcher.js';
import { ProfileReconciler } from './reconciler.js';
import { KubernetesVersions } from './version.js';

/** Cluster API's conditions that ControlPlaneHealthy is made of (status.ts). */
const PROFILE_SOURCE_CONDITIONS = ['ControlPlaneAvailable', 'RemoteConnectionProbe'];

export interface ProfileControllerOptions {
  /** spec.clusterManager.name and the x-k8s.io/cluster-manager label (--cluster-manager-name). */
  clusterManager: string;
  workers?: number;
  requestTimeoutMs?: number;
  /** How often each profile is looked at again without a change (default 5 minutes). */
  resyncMs?: number;
}

export class ProfileController implements Runnable {
  readonly name = 'clusterprofile';
  private readonly queue: WorkQueue<string>;
  private readonly profiles: WatchedResource<ClusterProfile & KubernetesObject>;
  /** What of each Cluster's status the profile carries, as last seen: a change of anything else enqueues nothing. */
  private readonly clusterStatus = new Map<string, string>();
  /** Each namespace's ClusterSet label as last seen: a change enqueues its Clusters. */
  private readonly clusterSets = new Map<string, string | undefined>();

  constructor(
    private readonly mgr: Manager,
    opts: ProfileControllerOptions,
  ) {
    this.profiles = mgr.cache.informer(CLUSTER_PROFILES);
    const profiles = this.profiles;
    const requestTimeoutMs = opts.requestTimeoutMs ?? 10_000;
    const versions = new KubernetesVersions({
      clusters: mgr.clusters,
      refreshMs: 10 * 60_000,
      requestTimeoutMs,
    });
    const clusters = mgr.cache.informer(CLUSTERS);
    const reconciler = new ProfileReconciler({
      getCluster: (namespace, name) => clusters.get(name, namespace),
      provider: mgr.provider,
      getProfile: (namespace, name) => profiles.get(name, namespace),
      clusterSet: (namespace) => clusterSetOf(mgr.cache.namespaces.get(namespace)),
      kubernetesVersion: (namespace, name, topology) => versions.of(namespace, name, topology),
      clusterManager: opts.clusterManager,
      patcher: new ClusterProfilePatcher(mgr.management, requestTimeoutMs),
      metrics: new ProfileMetrics(mgr.metrics.registry),
      events: mgr.events,
      log: mgr.log,
      resyncMs: opts.resyncMs ?? 5 * 60_000,
    });
    const workers = opts.workers ?? 2;
    this.queue = new WorkQueue<string>(
      async (key) => (mgr.share.owns(namespaceOfKey(key)) ? reconciler.reconcile(key) : undefined),
      {
        concurrency: workers,
        metrics: mgr.metrics.controller(this.name, workers),
        baseDelayMs: 200,
        maxDelayMs: 30_000,
        onError: (key, err, retryInMs) =>
          mgr.log.warn('reconcile failed', { cluster: key, error: errorText(err), retryInMs }),
      },
    );
    this.watch();
  }

  start(): void {
    this.queue.start();
    this.enqueueAll();
  }

  /** Every Cluster API Cluster (not another inventory's clusters: those publish no profile of ours). */
  private enqueueAll(namespace?: string): void {
    for (const c of this.mgr.cache.informer(CLUSTERS).list(namespace))
      this.enqueue(c.metadata?.namespace, c.metadata?.name);
  }

  async stop(): Promise<void> {
    await this.queue.shutdown();
  }

  private watch(): void {
    const { mgr } = this;
    const clusters = mgr.cache.informer(CLUSTERS);
    mgr.provider.onChange((_type, c) => this.enqueue(c.metadata?.namespace, c.metadata?.name));
    mgr.provider.onCredentialsChange((namespace, name) => this.enqueue(namespace, name));
    // The provider reports lifecycle changes only; the profile also carries Cluster API's health
    // conditions and the topology version, which the same (shared) informer of Clusters shows.
    clusters.onChange((type, c) => {
      const key = `${c.metadata?.namespace}/${c.metadata?.name}`;
      if (type === 'delete') return void this.clusterStatus.delete(key);
      const shown = JSON.stringify([
        (c.status?.conditions ?? [])
          .filter((x) => PROFILE_SOURCE_CONDITIONS.includes(x.type))
          .map((x) => [x.type, x.status, x.reason, x.message]),
        (c as { spec?: { topology?: { version?: string } } }).spec?.topology?.version,
      ]);
      if (this.clusterStatus.get(key) === shown) return;
      this.clusterStatus.set(key, shown);
      this.enqueue(c.metadata?.namespace, c.metadata?.name);
    });
    // Someone changed or deleted a profile: ours is put back as it should be.
    this.profiles.onChange((_type, p) => {
      if (clusters.get(p.metadata?.name ?? '', p.metadata?.namespace ?? ''))
        this.enqueue(p.metadata?.namespace, p.metadata?.name);
    });
    // A namespace joining or leaving a ClusterSet changes its profiles' properties.
    mgr.cache.namespaces.onChange((type, ns) => {
      const name = ns.metadata?.name ?? '';
      const set = type === 'delete' ? undefined : clusterSetOf(ns);
      if (this.clusterSets.has(name) && this.clusterSets.get(name) === set) return;
      this.clusterSets.set(name, set);
      this.enqueueAll(name);
    });
    mgr.share.onChange(() => this.enqueueAll());
  }

  private enqueue(namespace: string | undefined, name: string | undefined): void {
    if (namespace && name) this.queue.add(`${namespace}/${name}`);
  }
}
