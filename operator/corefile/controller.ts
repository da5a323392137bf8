// Wires the Corefile reconciler: Cluster objects of the management cluster,
// and in each workload cluster the CoreDNS ConfigMap and the dns-server
// Service (watched through the shared ClusterCache), enqueue the cluster's
// key; a work queue of its own runs the reconciles, so a slow Corefile write
// never holds up record sets.
import {
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { DNS_SERVER_SERVICE } from '../../api/index.js';
import type { ClusterCache, ClusterEvent } from '../clusters/cache.js';
import type { EventRecorder } from '../runtime/events.js';
import { WatchedResource } from '../runtime/informer.js';
import { errorText, type Logger } from '../runtime/log.js';
import { WorkQueue } from '../runtime/workqueue.js';
import {
  COREDNS_CONFIGMAP,
  COREDNS_NAMESPACE,
  CorefileReconciler,
  type CorefileCluster,
} from './reconciler.js';

export interface CorefileControllerOptions {
  management: KubeConfig;
  clusters: ClusterCache;
  namespace?: string;
  zone: string;
  recordsNamespace: string;
  cleanup: boolean;
  events: EventRecorder;
  log: Logger;
  relistMs?: number;
}

type ClusterObj = CorefileCluster & KubernetesObject;

export class CorefileController {
  private readonly clusterObjects: WatchedResource<ClusterObj>;
  private readonly queue: WorkQueue;
  private readonly reconciler: CorefileReconciler;
  private readonly results = new Map<string, string>();
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly opts: CorefileControllerOptions) {
    const custom = opts.management.makeApiClient(CustomObjectsApi);
    const ns = opts.namespace;
    this.clusterObjects = new WatchedResource<ClusterObj>({
      kc: opts.management,
      path: `/apis/cluster.x-k8s.io/v1beta1${ns ? `/namespaces/${ns}` : ''}/clusters`,
      list: () =>
        (ns
          ? custom.listNamespacedCustomObject({
              group: 'cluster.x-k8s.io',
              version: 'v1beta1',
              namespace: ns,
              plural: 'clusters',
            })
          : custom.listClusterCustomObject({
              group: 'cluster.x-k8s.io',
              version: 'v1beta1',
              plural: 'clusters',
            })) as Promise<KubernetesListObject<ClusterObj>>,
      relistMs: opts.relistMs,
    });
    this.reconciler = new CorefileReconciler({
      clusters: opts.clusters,
      getCluster: (namespace, name) => this.clusterObjects.get(name, namespace),
      zone: opts.zone,
      recordsNamespace: opts.recordsNamespace,
      cleanup: opts.cleanup,
      events: opts.events,
      log: opts.log,
    });
    this.queue = new WorkQueue(
      async (key) => {
        const result = await this.reconciler.reconcile(key);
        this.results.set(key, result);
        this.notifyIfIdle();
      },
      {
        concurrency: 4,
        baseDelayMs: 250,
        maxDelayMs: 30_000,
        onError: (key, err, retryInMs) => {
          this.results.set(key, `error: ${errorText(err)}`);
          opts.log.warn('Corefile reconcile failed', { cluster: key, error: errorText(err), retryInMs });
          this.notifyIfIdle();
        },
      },
    );
    this.clusterObjects.onChange((_type, c) => this.queue.add(keyOf(c)));
    opts.clusters.onEvent((event) => this.onClusterEvent(event));
  }

  async start(): Promise<void> {
    this.clusterObjects.start();
    await this.clusterObjects.waitForFirstAttempt(30_000);
    this.queue.start();
    for (const c of this.clusterObjects.list()) this.queue.add(keyOf(c));
  }

  /** Every cluster's last outcome ("patched", "current", "error: …"): for --cleanup-corefiles and tests. */
  outcomes(): ReadonlyMap<string, string> {
    return this.results;
  }

  /** Resolves once every known cluster has an outcome (used by the one-shot cleanup). */
  async settled(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.clusterObjects.list().some((c) => !this.results.has(keyOf(c)))) {
      if (Date.now() > deadline) throw new Error(`Corefile cleanup not finished after ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        this.idleWaiters.push(resolve);
        setTimeout(resolve, 500).unref();
      });
    }
  }

  async stop(): Promise<void> {
    await this.queue.shutdown();
    await this.clusterObjects.stop();
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

  private notifyIfIdle(): void {
    this.idleWaiters.splice(0).forEach((w) => w());
  }
}

function keyOf(obj: KubernetesObject): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}
