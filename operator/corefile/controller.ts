// Wires the Corefile reconciler: Cluster objects of the management cluster
// (the informer the GatewayDNS controller already runs), and in each workload
// cluster the CoreDNS ConfigMap and the dns-server Service (watched through
// the shared ClusterCache), enqueue the cluster's key; a work queue of its own
// runs the reconciles, so a slow Corefile write never holds up record sets.
import type { KubernetesObject, V1Namespace } from '@kubernetes/client-node';
import { DNS_SERVER_SERVICE } from '../../api/index.js';
import type { ClusterCache, ClusterEvent } from '../clusters/cache.js';
import { onClusterChange } from '../clusters/cluster-changes.js';
import type { EventRecorder } from '../runtime/events.js';
import type { WatchedResource } from '../runtime/informer.js';
import { errorText, type Logger } from '../runtime/log.js';
import { namespaceOfKey, objectKey, WorkQueue } from '../runtime/workqueue.js';
import { WHOLE_FLEET, type Share } from '../sharding/share.js';
import { clusterSetOf } from '../model/clusterset.js';
import {
  COREDNS_CONFIGMAP,
  COREDNS_NAMESPACE,
  CorefileReconciler,
  type CorefileCluster,
} from './reconciler.js';

export interface CorefileControllerOptions {
  clusters: ClusterCache;
  /** The management cluster's Clusters, started and owned by the GatewayDNS controller. */
  clusterObjects: WatchedResource<CorefileCluster & KubernetesObject>;
  zone: string;
  /** Multi-Cluster Services: the zone forwarded too in a ClusterSet's clusters, and the management Namespaces that say which are. */
  clusterset?: {
    zone: string;
    namespaces: WatchedResource<V1Namespace & KubernetesObject>;
  };
  recordsNamespace: string;
  cleanup: boolean;
  events: EventRecorder;
  log: Logger;
  /** The namespaces this replica serves (ADR 0207); all when unset. */
  share?: Share;
}

export class CorefileController {
  private readonly queue: WorkQueue;
  private readonly reconciler: CorefileReconciler;
  /** Every cluster's last outcome: "patched", "current", "error: …". */
  private readonly results = new Map<string, string>();

  constructor(private readonly opts: CorefileControllerOptions) {
    this.reconciler = new CorefileReconciler({
      clusters: opts.clusters,
      getCluster: (namespace, name) => opts.clusterObjects.get(name, namespace),
      zone: opts.zone,
      clustersetZone: (namespace) =>
        opts.clusterset && clusterSetOf(opts.clusterset.namespaces.get(namespace))
          ? opts.clusterset.zone
          : undefined,
      clustersetZones: opts.clusterset ? [opts.clusterset.zone] : [],
      recordsNamespace: opts.recordsNamespace,
      cleanup: opts.cleanup,
      events: opts.events,
      log: opts.log,
    });
    const share = opts.share ?? WHOLE_FLEET;
    this.queue = new WorkQueue(
      async (key) => {
        // Another replica's namespace: its Corefiles are that replica's to write.
        if (!share.owns(namespaceOfKey(key))) return void this.results.set(key, 'not-served');
        this.results.set(key, await this.reconciler.reconcile(key));
      },
      {
        concurrency: 4,
        baseDelayMs: 250,
        maxDelayMs: 30_000,
        onError: (key, err, retryInMs) => {
          this.results.set(key, `error: ${errorText(err)}`);
          opts.log.warn('Corefile reconcile failed', { cluster: key, error: errorText(err), retryInMs });
        },
      },
    );
    onClusterChange(opts.clusterObjects, (_type, c) => this.queue.add(objectKey(c)));
    // A namespace joining or leaving a ClusterSet changes which zones its clusters forward.
    const seenSet = new Map<string, string | undefined>();
    opts.clusterset?.namespaces.onChange((type, ns) => {
      const name = ns.metadata?.name ?? '';
      const set = type === 'delete' ? undefined : clusterSetOf(ns);
      if (seenSet.has(name) && seenSet.get(name) === set) return;
      seenSet.set(name, set);
      for (const c of opts.clusterObjects.list(name)) this.queue.add(objectKey(c));
    });
    opts.clusters.onEvent((event) => this.onClusterEvent(event));
    // A namespace gained: its Clusters' Corefiles are looked at now.
    share.onChange((affected, held) => {
      if (held)
        for (const c of opts.clusterObjects.list())
          if (affected(c.metadata?.namespace ?? '')) this.queue.add(objectKey(c));
    });
  }

  /** Call once the Cluster informer has synced (the GatewayDNS controller's start() waits for it). */
  start(): void {
    if (!this.opts.clusterObjects.synced)
      throw new Error('Corefile controller: the Cluster informer has not synced');
    this.queue.start();
    for (const c of this.opts.clusterObjects.list()) this.queue.add(objectKey(c));
  }

  /**
   * For the one-shot clean-up: waits until every Cluster has been reconciled successfully (retries
   * included), or the time is up; resolves with the clusters that still fail.
   */
  async settle(timeoutMs: number): Promise<Map<string, string>> {
    const deadline = Date.now() + timeoutMs;
    const failing = () =>
      new Map(
        this.opts.clusterObjects
          .list()
          .map((c) => [objectKey(c), this.results.get(objectKey(c)) ?? 'not reconciled yet'] as const)
          .filter(([, outcome]) => outcome.startsWith('error') || outcome === 'not reconciled yet'),
      );
    while (failing().size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    return failing();
  }

  async stop(): Promise<void> {
    await this.queue.shutdown();
  }

  private onClusterEvent(event: ClusterEvent): void {
    if (event.type !== 'change') return this.queue.add(event.cluster);
    const { kind, object } = event.change;
    const ns = object.metadata?.namespace;
    const name = object.metadata?.name;
    const relevant =
      (kind === 'ConfigMap' && ns === COREDNS_NAMESPACE && name === COREDNS_CONFIGMAP) ||
      (kind === 'Service' && ns === this.opts.recordsNamespace && name === DNS_SERVER_SERVICE);
    if (relevant) this.queue.add(event.cluster);
  }
}
