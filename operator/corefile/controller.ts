// The Corefile controller: Cluster objects of the management cluster (the
// manager's informer), and in each workload cluster the CoreDNS ConfigMap and
// the dns-server Service (watched through the manager's ClusterCache), enqueue
// the cluster's key; a work queue of its own runs the reconciles, so a slow
// Corefile write never holds up record sets.
import { DNS_SERVER_SERVICE } from '../../api/index.js';
import type { ClusterEvent } from '../manager/clusters/cache.js';
import type { Manager } from '../manager/manager.js';
import type { Runnable } from '../manager/runnable.js';
import { errorText } from '../manager/runtime/log.js';
import {
  keyOfObject,
  objectKeyId,
  parseObjectKeyId,
  WorkQueue,
  type ObjectKey,
} from '../manager/runtime/workqueue.js';
import { clusterSetOf } from '../model/clusterset.js';
import { COREDNS_CONFIGMAP, COREDNS_CONFIGMAPS, COREDNS_NAMESPACE } from './kinds.js';
import { CorefileReconciler } from './reconciler.js';
import { SERVICES } from '../manager/clusters/kinds.js';

export interface CorefileControllerOptions {
  /** The zones every wired cluster forwards to its dns-server: the suffix first, then --zone's. */
  zones: readonly string[];
  /** Multi-Cluster Services: the zone forwarded too in a ClusterSet's clusters (those of a management namespace labelled as one). */
  clustersetZone?: string;
  /** Take the forward blocks out instead of writing them (--cleanup-corefiles). */
  cleanup: boolean;
}

export class CorefileController implements Runnable {
  readonly name = 'corefile';
  private readonly queue: WorkQueue<ObjectKey>;
  private readonly reconciler: CorefileReconciler;
  /** Every cluster's last outcome: "patched", "current", "error: …". */
  private readonly results = new Map<string, string>();

  constructor(
    private readonly mgr: Manager,
    opts: CorefileControllerOptions,
  ) {
    const { cache, clusters, share, log } = mgr;
    const clustersetZone = opts.clustersetZone;
    this.reconciler = new CorefileReconciler({
      clusters,
      getCluster: (namespace, name) => this.mgr.provider.get(namespace, name),
      zones: opts.zones,
      clustersetZone: (namespace) =>
        clustersetZone && clusterSetOf(cache.namespaces.get(namespace)) ? clustersetZone : undefined,
      clustersetZones: clustersetZone ? [clustersetZone] : [],
      recordsNamespace: mgr.recordsNamespace,
      cleanup: opts.cleanup,
      events: mgr.events,
      log,
    });
    this.queue = new WorkQueue<ObjectKey>(
      async (key) => {
        // Another replica's namespace: its Corefiles are that replica's to write.
        if (!share.owns(key.namespace)) return void this.results.set(objectKeyId(key), 'not-served');
        this.results.set(objectKeyId(key), await this.reconciler.reconcile(key));
      },
      {
        idOf: objectKeyId,
        concurrency: 4,
        metrics: mgr.metrics.controller(this.name, 4),
        baseDelayMs: 250,
        maxDelayMs: 30_000,
        onError: (key, err, retryInMs) => {
          this.results.set(objectKeyId(key), `error: ${errorText(err)}`);
          log.warn('Corefile reconcile failed', {
            cluster: objectKeyId(key),
            error: errorText(err),
            retryInMs,
          });
        },
      },
    );
    this.mgr.provider.onChange((_type, c) => this.queue.add(keyOfObject(c)));
    // A namespace joining or leaving a ClusterSet changes which zones its clusters forward.
    const seenSet = new Map<string, string | undefined>();
    if (clustersetZone)
      cache.namespaces.onChange((type, ns) => {
        const name = ns.metadata?.name ?? '';
        const set = type === 'delete' ? undefined : clusterSetOf(ns);
        if (seenSet.has(name) && seenSet.get(name) === set) return;
        seenSet.set(name, set);
        for (const c of this.mgr.provider.list(name)) this.queue.add(keyOfObject(c));
      });
    clusters.onEvent((event) => this.onClusterEvent(event));
    // A namespace gained: its Clusters' Corefiles are looked at now.
    share.onChange((affected, held) => {
      if (held)
        for (const c of this.mgr.provider.list())
          if (affected(c.metadata?.namespace ?? '')) this.queue.add(keyOfObject(c));
    });
  }

  /** The manager's caches have synced: every Cluster's Corefile is looked at. */
  start(): void {
    this.queue.start();
    for (const c of this.mgr.provider.list()) this.queue.add(keyOfObject(c));
  }

  /**
   * For the one-shot clean-up: waits until every Cluster has been reconciled successfully (retries
   * included), or the time is up; resolves with the clusters that still fail.
   */
  async settle(timeoutMs: number): Promise<Map<string, string>> {
    const deadline = Date.now() + timeoutMs;
    const failing = () =>
      new Map(
        this.mgr.provider
          .list()
          .map((c) => objectKeyId(keyOfObject(c)))
          .map((id) => [id, this.results.get(id) ?? 'not reconciled yet'] as const)
          .filter(([, outcome]) => outcome.startsWith('error') || outcome === 'not reconciled yet'),
      );
    while (failing().size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    return failing();
  }

  async stop(): Promise<void> {
    await this.queue.shutdown();
  }

  private onClusterEvent(event: ClusterEvent): void {
    const cluster = parseObjectKeyId(event.cluster);
    if (event.type !== 'change') return this.queue.add(cluster);
    const { kind, object } = event.change;
    const ns = object.metadata?.namespace;
    const name = object.metadata?.name;
    const relevant =
      (kind === COREDNS_CONFIGMAPS.kind && ns === COREDNS_NAMESPACE && name === COREDNS_CONFIGMAP) ||
      (kind === SERVICES.kind && ns === this.mgr.recordsNamespace && name === DNS_SERVER_SERVICE);
    if (relevant) this.queue.add(cluster);
  }
}
