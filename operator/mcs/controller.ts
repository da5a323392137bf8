// Wires Multi-Cluster Services (KEP-1645) on the management cluster: a
// management namespace labelled multicluster.x-k8s.io/clusterset=<name> makes
// its Clusters one ClusterSet. Events only enqueue keys: "<ns>|<namespace>|<name>"
// per exported Service (reconciler.ts), "member|<ns>|<cluster>" per member's
// identity (cluster-properties.ts). It shares the GatewayDNS controller's
// cluster clients, watches and writer: one observation, one writer.
import type { KubernetesObject, V1Namespace } from '@kubernetes/client-node';
import { MCS_SERVICE_NAME_LABEL, SERVICE_NAME_LABEL } from '../../api/index.js';
import { clusterSetOf } from '../model/clusterset.js';
import type { ClusterCache, ClusterEvent } from '../clusters/cache.js';
import { frozenBy, type ClusterObject } from '../clusters/lifecycle.js';
import { onClusterChange } from '../clusters/cluster-changes.js';
import type { OwnedObjectWriter } from '../clusters/owned-writer.js';
import type { WorkloadWatches } from '../gatewaydns/watches.js';
import type { WatchedResource } from '../runtime/informer.js';
import { errorText, type Logger } from '../runtime/log.js';
import { WorkQueue } from '../runtime/workqueue.js';
import { WHOLE_FLEET, type Share } from '../sharding/share.js';
import { ClusterProperties } from './cluster-properties.js';
import { McsReconciler, serviceKey, type Member } from './reconciler.js';

type ClusterLike = ClusterObject & KubernetesObject;

export interface McsControllerOptions {
  clusters: ClusterCache;
  clusterObjects: WatchedResource<ClusterLike>;
  namespaces: WatchedResource<V1Namespace & KubernetesObject>;
  writer: OwnedObjectWriter;
  watches: WorkloadWatches;
  workers: number;
  log: Logger;
  firstSyncTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** The management namespaces (ClusterSets) this replica serves (ADR 0207); all when unset. */
  share?: Share;
}

const MEMBER = 'member';

export class McsController {
  private readonly queue: WorkQueue;
  private readonly reconciler: McsReconciler;
  private readonly properties: ClusterProperties;
  /** The ClusterSet label per management namespace as last seen: only a change of it enqueues. */
  private readonly seenSet = new Map<string, string | undefined>();
  /** ServiceExport generation and deletion per object: a status-only update (ours) enqueues nothing. */
  private readonly seenExport = new Map<string, string>();

  private readonly share: Share;

  constructor(private readonly opts: McsControllerOptions) {
    this.share = opts.share ?? WHOLE_FLEET;
    const requestTimeoutMs = opts.requestTimeoutMs ?? 10_000;
    const firstSyncTimeoutMs = opts.firstSyncTimeoutMs ?? 5_000;
    this.reconciler = new McsReconciler({
      members: (ns) => (this.clusterSet(ns) ? this.clustersOf(ns) : []),
      allClusters: (ns) => this.clustersOf(ns),
      writer: opts.writer,
      watches: opts.watches,
      log: opts.log,
      firstSyncTimeoutMs,
      requestTimeoutMs,
    });
    this.properties = new ClusterProperties({ writer: opts.writer, requestTimeoutMs, firstSyncTimeoutMs });
    this.queue = new WorkQueue((key) => this.handle(key), {
      concurrency: opts.workers,
      baseDelayMs: 200,
      maxDelayMs: 30_000,
      onError: (key, err, retryInMs) =>
        opts.log.warn('multi-cluster services reconcile failed', { key, error: errorText(err), retryInMs }),
    });
  }

  /** After the GatewayDNS controller's informers have synced: they are shared. */
  start(): void {
    this.opts.namespaces.onChange((type, namespace) => {
      const name = namespace.metadata?.name ?? '';
      const set = type === 'delete' ? undefined : clusterSetOf(namespace);
      if (this.seenSet.has(name) && this.seenSet.get(name) === set) return;
      const was = this.seenSet.get(name);
      this.seenSet.set(name, set);
      if (set || was) this.enqueueNamespace(name);
    });
    onClusterChange(this.opts.clusterObjects, (_type, cluster) => {
      const ns = cluster.metadata?.namespace ?? '';
      if (this.clusterSet(ns) || this.seenSet.get(ns)) this.enqueueNamespace(ns);
    });
    this.opts.clusters.onEvent((event) => this.onClusterEvent(event));
    this.share.onChange((affected, held) => {
      // Lost: what is remembered of its Services is let go (the clients are already dropped).
      if (!held) return this.reconciler.keysWhere(affected).forEach((key) => this.reconciler.release(key));
      for (const ns of this.opts.namespaces.list()) {
        const name = ns.metadata?.name ?? '';
        if (affected(name) && clusterSetOf(ns)) this.enqueueNamespace(name);
      }
    });
    for (const ns of this.opts.namespaces.list()) this.seenSet.set(ns.metadata?.name ?? '', clusterSetOf(ns));
    this.queue.start();
    for (const ns of this.opts.namespaces.list())
      if (clusterSetOf(ns)) this.enqueueNamespace(ns.metadata?.name ?? '');
  }

  async stop(): Promise<void> {
    await this.queue.shutdown();
  }

  private async handle(key: string): Promise<void> {
    const [kind, ns = '', cluster = ''] = key.split('|');
    if (!this.share.owns(kind === MEMBER ? ns : (kind ?? ''))) {
      if (kind !== MEMBER) this.reconciler.release(key);
      return;
    }
    if (kind !== MEMBER) {
      const summary = await this.reconciler.reconcile(key);
      if (summary.failed.length) throw new Error(`not written everywhere: ${summary.failed.join('; ')}`);
      return;
    }
    const remote = this.opts.clusters.get(ns, cluster);
    if (!remote) return;
    const set = this.clusterSet(ns);
    const object = this.opts.clusterObjects.get(cluster, ns);
    if (set && object && !frozenBy(object)) {
      await this.properties.keep(remote, cluster, set);
      // The member's exports and our objects there: watched from now on, so that their events arrive.
      remote.serviceExports();
      remote.serviceImports();
      remote.derivedServices();
      remote.mcsEndpointSlices();
    } else if (remote.watching('ClusterProperty')) await this.properties.withdraw(remote);
  }

  private onClusterEvent(event: ClusterEvent): void {
    const [ns = '', cluster = ''] = event.cluster.split('/');
    if (!this.clusterSet(ns) && !this.seenSet.get(ns)) {
      // Not a ClusterSet (any more): only our own objects there matter, for their withdrawal.
      if (
        event.type !== 'change' ||
        !['ServiceImport', 'DerivedService', 'McsEndpointSlice'].includes(event.change.kind)
      )
        return;
    }
    if (event.type !== 'change') {
      this.enqueueNamespace(ns);
      return;
    }
    const { kind, type, object } = event.change;
    const namespace = object.metadata?.namespace ?? '';
    const name = object.metadata?.name ?? '';
    const writer = this.opts.writer;
    switch (kind) {
      case 'ServiceExport': {
        const id = `${event.cluster}|${namespace}/${name}`;
        const signature = `${object.metadata?.uid}|${object.metadata?.generation}|${object.metadata?.deletionTimestamp ?? ''}`;
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
          this.queue.add(`${MEMBER}|${ns}|${cluster}`);
        return;
      case 'Namespace':
        for (const key of this.keysOf(ns)) if (key.split('|')[1] === name) this.queue.add(key);
        return;
    }
  }

  /** Whether some cluster of the management namespace exports namespace/name. */
  private exported(ns: string, namespace: string, name: string): boolean {
    if (!this.clusterSet(ns)) return false;
    return this.clustersOf(ns).some((c) => c.remote?.serviceExports().get(name, namespace));
  }

  private clusterSet(ns: string): string | undefined {
    return clusterSetOf(this.opts.namespaces.get(ns));
  }

  private clustersOf(ns: string): Member[] {
    return this.opts.clusterObjects.list(ns).map((c) => {
      const name = c.metadata?.name ?? '';
      return { name, remote: this.opts.clusters.get(ns, name), frozen: frozenBy(c) !== undefined };
    });
  }

  /** Every exported or imported Service the namespace's clusters show, and each cluster's identity. */
  private keysOf(ns: string): string[] {
    const keys = new Set<string>();
    const member = Boolean(this.clusterSet(ns));
    for (const c of this.clustersOf(ns)) {
      keys.add(`${MEMBER}|${ns}|${c.name}`);
      const remote = c.remote;
      if (!remote) continue;
      const objects = [...(member ? remote.serviceExports().list() : []), ...remote.serviceImports().list()];
      for (const o of objects) keys.add(serviceKey(ns, o.metadata?.namespace ?? '', o.metadata?.name ?? ''));
    }
    return [...keys];
  }

  private enqueueNamespace(ns: string): void {
    for (const key of this.keysOf(ns)) this.queue.add(key);
  }
}
