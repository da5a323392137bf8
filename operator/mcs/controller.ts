// Wires Multi-Cluster Services (KEP-1645) on the management cluster: a
// management namespace labelled multicluster.x-k8s.io/clusterset=<name> makes
// its Clusters one ClusterSet. Events only enqueue keys: a ServiceKey per
// exported Service (reconciler.ts), a member key per member's identity
// (cluster-properties.ts). Its cluster clients, watch holds and writer
// are the manager's, shared with every controller: one observation, one writer.
import { MCS_EXPORT_TO_ANNOTATION, MCS_SERVICE_NAME_LABEL, SERVICE_NAME_LABEL } from '../../api/index.js';
import { clusterSetOf } from '../model/clusterset.js';
import type { ClusterEvent } from '../manager/clusters/cache.js';
import { clusterEventTarget, frozenBy } from '../manager/clusters/lifecycle.js';
import type { Manager } from '../manager/manager.js';
import type { Runnable } from '../manager/runnable.js';
import { errorText } from '../manager/runtime/log.js';
import { WorkQueue } from '../manager/runtime/workqueue.js';
import { McsMetrics } from './metrics.js';
import {
  CLUSTER_PROPERTIES,
  DERIVED_SERVICES,
  IMPORT_KINDS,
  MCS_ENDPOINT_SLICES,
  SERVICE_EXPORTS,
  SERVICE_IMPORTS,
} from './kinds.js';
import { ClusterProperties, propertyConflict } from './cluster-properties.js';
import { McsReconciler, type Member } from './reconciler.js';
import { mcsKeyId, serviceKey, type McsKey } from './keys.js';

export interface McsControllerOptions {
  workers: number;
  firstSyncTimeoutMs?: number;
  requestTimeoutMs?: number;
}

export class McsController implements Runnable {
  readonly name = 'mcs';
  private readonly queue: WorkQueue<McsKey>;
  private readonly reconciler: McsReconciler;
  private readonly properties: ClusterProperties;
  /** The ClusterSet label per management namespace as last seen: only a change of it enqueues. */
  private readonly seenSet = new Map<string, string | undefined>();
  /** ServiceExport generation and deletion per object: a status-only update (ours) enqueues nothing. */
  private readonly seenExport = new Map<string, string>();
  /** Per "namespace/cluster", why it is left out of its ClusterSet (someone else's ClusterProperty). */
  private readonly conflicts = new Map<string, string>();

  constructor(
    private readonly mgr: Manager,
    opts: McsControllerOptions,
  ) {
    const requestTimeoutMs = opts.requestTimeoutMs ?? 10_000;
    const firstSyncTimeoutMs = opts.firstSyncTimeoutMs ?? 5_000;
    this.reconciler = new McsReconciler({
      members: (ns) => this.membersOf(ns),
      allClusters: (ns) => this.clustersOf(ns),
      writer: mgr.writer,
      watches: mgr.watches,
      log: mgr.log,
      metrics: new McsMetrics(mgr.metrics.registry),
      firstSyncTimeoutMs,
      requestTimeoutMs,
    });
    this.properties = new ClusterProperties({ writer: mgr.writer, requestTimeoutMs, firstSyncTimeoutMs });
    this.queue = new WorkQueue<McsKey>((key) => this.handle(key), {
      idOf: mcsKeyId,
      concurrency: opts.workers,
      metrics: mgr.metrics.controller(this.name, opts.workers),
      baseDelayMs: 200,
      maxDelayMs: 30_000,
      onError: (key, err, retryInMs) =>
        mgr.log.warn('multi-cluster services reconcile failed', {
          key: mcsKeyId(key),
          error: errorText(err),
          retryInMs,
        }),
    });
  }

  /** The manager's caches have synced: what is seen now is the starting point. */
  start(): void {
    const { cache, clusters, share } = this.mgr;
    cache.namespaces.onChange((type, namespace) => {
      const name = namespace.metadata?.name ?? '';
      const set = type === 'delete' ? undefined : clusterSetOf(namespace);
      if (this.seenSet.has(name) && this.seenSet.get(name) === set) return;
      const was = this.seenSet.get(name);
      this.seenSet.set(name, set);
      if (set || was) this.enqueueNamespace(name);
    });
    this.mgr.provider.onChange((_type, cluster) => {
      const ns = cluster.metadata?.namespace ?? '';
      if (this.clusterSet(ns) || this.seenSet.get(ns)) this.enqueueNamespace(ns);
    });
    clusters.onEvent((event) => this.onClusterEvent(event));
    share.onChange((affected, held) => {
      // Lost: what is remembered of its Services is let go (the clients are already dropped).
      if (!held) return this.reconciler.keysWhere(affected).forEach((key) => this.reconciler.release(key));
      for (const ns of cache.namespaces.list()) {
        const name = ns.metadata?.name ?? '';
        if (affected(name) && clusterSetOf(ns)) this.enqueueNamespace(name);
      }
    });
    for (const ns of cache.namespaces.list()) this.seenSet.set(ns.metadata?.name ?? '', clusterSetOf(ns));
    this.queue.start();
    for (const ns of cache.namespaces.list())
      if (clusterSetOf(ns)) this.enqueueNamespace(ns.metadata?.name ?? '');
  }

  async stop(): Promise<void> {
    await this.queue.shutdown();
  }

  private async handle(key: McsKey): Promise<void> {
    if (key.kind === 'service') {
      if (!this.mgr.share.owns(key.managementNamespace)) return this.reconciler.release(key);
      const summary = await this.reconciler.reconcile(key);
      if (summary.failed.length) throw new Error(`not written everywhere: ${summary.failed.join('; ')}`);
      return;
    }
    const { managementNamespace: ns, cluster } = key;
    if (!this.mgr.share.owns(ns)) return;
    const remote = this.mgr.clusters.get(ns, cluster);
    if (!remote) return;
    const set = this.clusterSet(ns);
    const object = this.mgr.provider.get(ns, cluster);
    if (set && object && !frozenBy(object)) {
      const { conflict } = await this.properties.keep(remote, cluster, set);
      this.noteConflict(ns, cluster, conflict);
      if (conflict) return;
      // The member's exports and our objects there: watched from now on, so that their events arrive.
      remote.informer(SERVICE_EXPORTS);
      remote.informer(SERVICE_IMPORTS);
      remote.informer(DERIVED_SERVICES);
      remote.informer(MCS_ENDPOINT_SLICES);
    } else if (remote.watching(CLUSTER_PROPERTIES)) await this.properties.withdraw(remote);
  }

  private onClusterEvent(event: ClusterEvent): void {
    const [ns = '', cluster = ''] = event.cluster.split('/');
    if (!this.clusterSet(ns) && !this.seenSet.get(ns)) {
      // Not a ClusterSet (any more): only our own objects there matter, for their withdrawal.
      if (event.type !== 'change' || !IMPORT_KINDS.includes(event.change.kind)) return;
    }
    if (event.type !== 'change') {
      this.enqueueNamespace(ns);
      return;
    }
    const { kind, type, object } = event.change;
    const namespace = object.metadata?.namespace ?? '';
    const name = object.metadata?.name ?? '';
    const writer = this.mgr.writer;
    switch (kind) {
      case 'ServiceExport': {
        const id = `${event.cluster}|${namespace}/${name}`;
        // The export-to annotation too: an annotation's change does not move the generation.
        const signature = `${object.metadata?.uid}|${object.metadata?.generation}|${object.metadata?.deletionTimestamp ?? ''}|${object.metadata?.annotations?.[MCS_EXPORT_TO_ANNOTATION] ?? ''}`;
        if (type === 'update' && this.seenExport.get(id) === signature) return;
        if (type === 'delete') this.seenExport.delete(id);
        else this.seenExport.set(id, signature);
        this.queue.add(serviceKey(ns, namespace, name));
        return;
      }
      case 'Service':
        if (this.exported(ns, namespace, name)) this.queue.add(serviceKey(ns, namespace, name));
        return;
      case 'EndpointSlice': {
        const service = object.metadata?.labels?.[SERVICE_NAME_LABEL];
        if (
          service &&
          !object.metadata?.labels?.[MCS_SERVICE_NAME_LABEL] &&
          this.exported(ns, namespace, service)
        )
          this.queue.add(serviceKey(ns, namespace, service));
        return;
      }
      case 'ServiceImport':
      case 'DerivedService':
      case 'McsEndpointSlice': {
        const objectKind =
          kind === 'DerivedService' ? 'Service' : kind === 'McsEndpointSlice' ? 'EndpointSlice' : kind;
        if (writer.isOwnEcho(event.cluster, objectKind, type, object)) return;
        const service = object.metadata?.labels?.[MCS_SERVICE_NAME_LABEL];
        if (service) this.queue.add(serviceKey(ns, namespace, service));
        return;
      }
      case 'ClusterProperty':
        if (!writer.isOwnEcho(event.cluster, 'ClusterProperty', type, object))
          this.queue.add({ kind: 'member', managementNamespace: ns, cluster });
        return;
      case 'Namespace':
        for (const key of this.keysOf(ns))
          if (key.kind === 'service' && key.namespace === name) this.queue.add(key);
        return;
    }
  }

  /** Whether some cluster of the management namespace exports namespace/name. */
  private exported(ns: string, namespace: string, name: string): boolean {
    if (!this.clusterSet(ns)) return false;
    return this.clustersOf(ns).some((c) => c.remote?.informer(SERVICE_EXPORTS).get(name, namespace));
  }

  /**
   * The ClusterSet's members: its Clusters, less those whose ClusterProperty someone else set to
   * another id or set (read from the watched cache, so that a Service's reconcile needs no request).
   */
  private membersOf(ns: string): Member[] {
    const set = this.clusterSet(ns);
    if (!set) return [];
    return this.clustersOf(ns).filter((m) => {
      const remote = m.remote;
      if (!remote?.watching(CLUSTER_PROPERTIES)) return true;
      return propertyConflict(remote.informer(CLUSTER_PROPERTIES).list(), m.name, set) === undefined;
    });
  }

  /** A conflict found or settled: an Event on the Cluster, and the Services reconciled without (or with) it. */
  private noteConflict(ns: string, cluster: string, conflict: string | undefined): void {
    const id = `${ns}/${cluster}`;
    if (this.conflicts.get(id) === conflict) return;
    const had = this.conflicts.has(id);
    if (conflict) this.conflicts.set(id, conflict);
    else this.conflicts.delete(id);
    const object = this.mgr.provider.get(ns, cluster);
    if (conflict) {
      this.mgr.log.warn('cluster left out of its ClusterSet', { cluster: id, error: conflict });
      if (object)
        this.mgr.events.warning(clusterEventTarget(object.metadata), 'ClusterPropertyConflict', conflict);
    } else if (had) {
      this.mgr.log.info('cluster joins its ClusterSet: its ClusterProperty conflict is settled', {
        cluster: id,
      });
      if (object)
        this.mgr.events.normal(
          clusterEventTarget(object.metadata),
          'ClusterSetJoined',
          "its ClusterProperty objects are capi-dns's again",
        );
    }
    for (const key of this.keysOf(ns)) if (key.kind === 'service') this.queue.add(key);
  }

  private clusterSet(ns: string): string | undefined {
    return clusterSetOf(this.mgr.cache.namespaces.get(ns));
  }

  private clustersOf(ns: string): Member[] {
    return this.mgr.provider.list(ns).map((c) => {
      const name = c.metadata?.name ?? '';
      return {
        name,
        remote: this.mgr.clusters.get(ns, name),
        frozen: frozenBy(c) !== undefined,
        labels: c.metadata?.labels,
      };
    });
  }

  /** Every exported or imported Service the namespace's clusters show, and each cluster's identity. */
  private keysOf(ns: string): McsKey[] {
    const keys = new Map<string, McsKey>();
    const add = (key: McsKey) => keys.set(mcsKeyId(key), key);
    const member = Boolean(this.clusterSet(ns));
    for (const c of this.clustersOf(ns)) {
      add({ kind: 'member', managementNamespace: ns, cluster: c.name });
      const remote = c.remote;
      if (!remote) continue;
      const objects = [
        ...(member ? remote.informer(SERVICE_EXPORTS).list() : []),
        ...remote.informer(SERVICE_IMPORTS).list(),
      ];
      for (const o of objects) add(serviceKey(ns, o.metadata?.namespace ?? '', o.metadata?.name ?? ''));
    }
    return [...keys.values()];
  }

  private enqueueNamespace(ns: string): void {
    for (const key of this.keysOf(ns)) this.queue.add(key);
  }
}
