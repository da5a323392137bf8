// Wires the GatewayDNS reconciler: management-cluster informers (GatewayDNS,
// Cluster, kubeconfig Secrets) and workload-cluster watches (through the
// ClusterCache) only enqueue GatewayDNS keys; a work queue runs the reconciles.
import {
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type V1Namespace,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import {
  CONTROLLER_NAME,
  GATEWAYDNS_NAME_LABEL,
  GATEWAYDNS_NAMESPACE_LABEL,
  GATEWAYDNS_PLURAL,
  GROUP,
  VERSION,
  WORKLOAD_NAMESPACES_ANNOTATION,
  type GatewayDNS,
} from '../../api/index.js';
import { ClusterCache, type ClusterEvent } from '../clusters/cache.js';
import { OwnedObjectWriter } from '../clusters/owned-writer.js';
import { WorkloadWatches } from './watches.js';
import type { KubeconfigPolicy } from '../clusters/kubeconfig.js';
import { KubeconfigSecrets } from '../clusters/kubeconfig-secrets.js';
import type { EventRecorder } from '../runtime/events.js';
import { WatchedResource } from '../runtime/informer.js';
import { errorText, type Logger } from '../runtime/log.js';
import type { Metrics } from '../runtime/metrics.js';
import { namespaceOfKey, objectKey, WorkQueue } from '../runtime/workqueue.js';
import { GatewayDnsReconciler } from './reconciler.js';
import { mirrorKeysFor } from '../mirror/events.js';
import {
  CLUSTER_API_GROUP,
  CLUSTER_API_GROUP_VERSION,
  CLUSTER_API_VERSION,
  frozenBy,
  notConnectableYet,
  type ClusterObject,
} from '../clusters/lifecycle.js';
import { onClusterChange } from '../clusters/cluster-changes.js';
import { resolutionTypeOf } from '../model/resolution-types.js';
import { matchesSelector } from '../model/selector.js';
import type { WriteGate } from '../runtime/write-gate.js';
import { WHOLE_FLEET, type Share } from '../sharding/share.js';

export interface ControllerOptions {
  management: KubeConfig;
  /** Only this management namespace; all when undefined. */
  namespace?: string;
  domainSuffix: string;
  recordsNamespace: string;
  workers: number;
  events: EventRecorder;
  metrics: Metrics;
  log: Logger;
  relistMs?: number;
  /** What a workload kubeconfig Secret may ask of the operator; strict when undefined. */
  kubeconfigPolicy?: KubeconfigPolicy;
  /** Where the writes to every workload cluster queue (runtime/write-gate.ts); unlimited when unset. */
  writeGate?: WriteGate;
  /**
   * How long a Cluster deleted while paused (clusterctl move deletes the source's paused copy; a
   * GitOps tool recreates one) is still taken as there, frozen, before its records are withdrawn:
   * long enough for the same Cluster to come back (default 10 min).
   */
  departedGraceMs?: number;
  /** Every GatewayDNS is reconciled again this often, whatever happened (a safety net, not needed for correctness). */
  resyncMs?: number;
  /**
   * The management namespaces this replica serves (ADR 0207); all when unset. The informers of the
   * management cluster see every namespace; clients, watches and writes are for these only.
   */
  share?: Share;
  /** Sent with every request to a workload cluster (ClusterCache). */
  userAgent?: string;
}

type Obj<T> = T & KubernetesObject;

export class GatewayDnsController {
  readonly clusters: ClusterCache;
  private readonly gatewayDns: WatchedResource<Obj<GatewayDNS>>;
  /** Cluster API Clusters of the management cluster; shared with the Corefile controller. */
  readonly clusterObjects: WatchedResource<Obj<ClusterObject>>;
  /** The "<cluster>-kubeconfig" Secrets only: no other Secret's data is read (clusters/kubeconfig-secrets.ts). */
  private readonly secrets: KubeconfigSecrets;
  /**
   * Namespaces of the management cluster: their annotation grants workload namespaces
   * (namespace-grants.ts), their ClusterSet label makes their Clusters one ClusterSet (mcs/).
   */
  readonly namespaces: WatchedResource<V1Namespace & KubernetesObject>;
  /** The grant annotation per management namespace as last seen: only a change of it enqueues. */
  private readonly seenGrant = new Map<string, string | undefined>();
  /** The one writer of every object the operator owns in workload clusters (record sets, mirrors, MCS objects). */
  readonly writer: OwnedObjectWriter;
  /** Which output holds which lazily started Service and EndpointSlice watch. */
  readonly watches: WorkloadWatches;
  private readonly queue: WorkQueue;
  private readonly reconciler: GatewayDnsReconciler;
  /** Generation and deletion state per GatewayDNS: a status-only update (often our own) enqueues nothing. */
  private readonly seenSpec = new Map<string, string>();
  /** When a workload-cluster change was first seen for a key not yet reconciled: for the latency metric. */
  private readonly pendingSince = new Map<string, number>();
  private resyncTimer?: NodeJS.Timeout;
  /** Clusters deleted while paused, by "namespace/name", kept frozen until they come back or the grace ends. */
  private readonly departed = new Map<string, { cluster: Obj<ClusterObject>; timer: NodeJS.Timeout }>();

  readonly share: Share;

  constructor(private readonly opts: ControllerOptions) {
    this.share = opts.share ?? WHOLE_FLEET;
    const custom = opts.management.makeApiClient(CustomObjectsApi);
    const kc = opts.management;
    const ns = opts.namespace;
    const within = ns ? `/namespaces/${ns}` : '';
    const listCustom = (group: string, version: string, plural: string) =>
      ns
        ? custom.listNamespacedCustomObject({ group, version, namespace: ns, plural })
        : custom.listClusterCustomObject({ group, version, plural });
    this.gatewayDns = new WatchedResource<Obj<GatewayDNS>>({
      kc,
      path: `/apis/${GROUP}/${VERSION}${within}/${GATEWAYDNS_PLURAL}`,
      // Namespaced when --namespace is set, so that a namespace-only Role is enough.
      list: () =>
        listCustom(GROUP, VERSION, GATEWAYDNS_PLURAL) as Promise<KubernetesListObject<Obj<GatewayDNS>>>,
      relistMs: opts.relistMs,
    });
    this.clusterObjects = new WatchedResource<Obj<ClusterObject>>({
      kc,
      path: `/apis/${CLUSTER_API_GROUP_VERSION}${within}/clusters`,
      list: () =>
        listCustom(CLUSTER_API_GROUP, CLUSTER_API_VERSION, 'clusters') as Promise<
          KubernetesListObject<Obj<ClusterObject>>
        >,
      relistMs: opts.relistMs,
    });
    const core = kc.makeApiClient(CoreV1Api);
    // Namespaced (--namespace): the one Namespace, by field selector.
    const oneNamespace = ns ? `metadata.name=${ns}` : undefined;
    this.namespaces = new WatchedResource<V1Namespace & KubernetesObject>({
      kc,
      path: '/api/v1/namespaces',
      fieldSelector: oneNamespace,
      list: () =>
        core.listNamespace({ fieldSelector: oneNamespace }) as Promise<
          KubernetesListObject<V1Namespace & KubernetesObject>
        >,
      relistMs: opts.relistMs,
    });
    this.secrets = new KubeconfigSecrets({
      kc,
      namespace: ns,
      log: opts.log,
      relistMs: opts.relistMs,
      onChange: (namespace, cluster) => this.clusters.secretChanged(namespace, cluster),
    });
    this.clusters = new ClusterCache({
      recordsNamespace: opts.recordsNamespace,
      readSecret: (namespace, name) => this.secrets.get(namespace, name),
      secretProblem: (namespace, name) => this.secrets.problem(namespace, name),
      kubeconfigPolicy: opts.kubeconfigPolicy,
      writeGate: opts.writeGate,
      share: this.share,
      userAgent: opts.userAgent,
      log: opts.log,
      relistMs: opts.relistMs,
      // As Cluster API's own cluster cache: no connection before Cluster API reports the Cluster up,
      // nor to a Cluster that is gone (a reconcile working from an older list would leak a client).
      // A paused one may be connected to: a GatewayDNS deleted meanwhile withdraws its sets there.
      notConnectableYet: (namespace, name) => {
        const cluster =
          this.clusterObjects.get(name, namespace) ?? this.departed.get(`${namespace}/${name}`)?.cluster;
        if (!cluster) return `no Cluster ${namespace}/${name} in the management cluster`;
        return frozenBy(cluster) ? undefined : notConnectableYet(cluster);
      },
    });
    this.writer = new OwnedObjectWriter({ fieldManager: CONTROLLER_NAME, requestTimeoutMs: 10_000 });
    this.watches = new WorkloadWatches({ clusters: this.clusters, log: opts.log });
    this.reconciler = new GatewayDnsReconciler({
      writer: this.writer,
      watches: this.watches,
      management: opts.management,
      clusters: this.clusters,
      getGatewayDns: (namespace, name) => this.gatewayDns.get(name, namespace),
      listGatewayDns: (namespace) => this.gatewayDns.list(namespace),
      listClusters: (namespace) => this.clustersOf(namespace),
      workloadNamespacesGrant: (namespace) =>
        this.namespaces.get(namespace)?.metadata?.annotations?.[WORKLOAD_NAMESPACES_ANNOTATION],
      domainSuffix: opts.domainSuffix,
      recordsNamespace: opts.recordsNamespace,
      events: opts.events,
      metrics: opts.metrics,
      log: opts.log,
      requeue: (keys) => keys.forEach((k) => this.queue.add(k)),
      serves: (namespace) => this.share.owns(namespace),
    });
    this.queue = new WorkQueue((key) => this.handle(key), {
      concurrency: opts.workers,
      baseDelayMs: 200,
      maxDelayMs: 30_000,
      onError: (key, err, retryInMs) =>
        opts.log.warn('reconcile failed', { gatewaydns: key, error: errorText(err), retryInMs }),
    });
    this.wire();
  }

  /**
   * Starts the informers and waits for their first lists, then starts reconciling unless told not
   * to (a one-shot Corefile clean-up needs the clients and Clusters, not the reconciles).
   */
  async start(opts: { reconcile?: boolean; syncTimeoutMs?: number } = {}): Promise<void> {
    const syncTimeoutMs = opts.syncTimeoutMs ?? 30_000;
    // Every grant is known before the first reconcile: none reads a namespace it may not.
    const informers = [this.namespaces, this.secrets, this.clusterObjects, this.gatewayDns];
    for (const w of informers) w.start();
    const began = Date.now();
    for (const w of informers) {
      while (!w.synced) {
        if (Date.now() - began > syncTimeoutMs)
          throw new Error(`management informers not synced after ${syncTimeoutMs} ms: ${w.lastError ?? ''}`);
        await w.waitForFirstAttempt(1000);
        if (!w.synced) await new Promise((r) => setTimeout(r, 200));
      }
    }
    if (opts.reconcile === false) return;
    this.queue.start();
    this.enqueueAll();
    const resync = this.opts.resyncMs ?? 10 * 60_000;
    this.resyncTimer = setInterval(() => this.enqueueAll(), resync);
    this.resyncTimer.unref();
  }

  get synced(): boolean {
    return (
      this.gatewayDns.synced && this.clusterObjects.synced && this.secrets.synced && this.namespaces.synced
    );
  }

  async stop(): Promise<void> {
    clearInterval(this.resyncTimer);
    for (const d of this.departed.values()) clearTimeout(d.timer);
    await this.queue.shutdown();
    await Promise.all([
      this.gatewayDns.stop(),
      this.clusterObjects.stop(),
      this.secrets.stop(),
      this.namespaces.stop(),
      this.clusters.stop(),
    ]);
  }

  private async handle(key: string): Promise<void> {
    if (!this.share.owns(namespaceOfKey(key))) {
      // Another replica's (or no one's, until a shard is taken): let go, write nothing.
      this.pendingSince.delete(key);
      return this.reconciler.release(key);
    }
    const began = Date.now();
    const since = this.pendingSince.get(key);
    this.pendingSince.delete(key);
    try {
      const summary = await this.reconciler.reconcile(key);
      if (since !== undefined && summary.written > 0)
        this.opts.metrics.observePropagation((Date.now() - since) / 1000);
      this.opts.log.debug('reconciled', {
        gatewaydns: key,
        ms: Date.now() - began,
        written: summary.written,
      });
    } catch (err) {
      this.opts.metrics.reconcileErrors++;
      throw err;
    } finally {
      // Counted when done, as controller-runtime counts them: a count that has reached N means N have finished.
      this.opts.metrics.reconciles++;
    }
  }

  private wire(): void {
    this.gatewayDns.onChange((type, gw) => {
      const key = objectKey(gw);
      const signature = `${gw.metadata?.generation}|${gw.metadata?.deletionTimestamp ?? ''}|${(gw.metadata?.finalizers ?? []).join()}`;
      if (type === 'update' && this.seenSpec.get(key) === signature) return;
      if (type === 'delete') this.seenSpec.delete(key);
      else this.seenSpec.set(key, signature);
      // A change of one GatewayDNS can settle or start a name conflict with the others of its namespace.
      this.enqueueNamespace(gw.metadata?.namespace ?? '');
      this.queue.add(key);
    });
    this.namespaces.onChange((type, namespace) => {
      const name = namespace.metadata?.name ?? '';
      const grant =
        type === 'delete' ? undefined : namespace.metadata?.annotations?.[WORKLOAD_NAMESPACES_ANNOTATION];
      if (this.seenGrant.has(name) && this.seenGrant.get(name) === grant) return;
      this.seenGrant.set(name, grant);
      this.enqueueNamespace(name);
    });
    onClusterChange(this.clusterObjects, (type, cluster) => {
      const namespace = cluster.metadata?.namespace ?? '';
      this.trackDeparture(type, cluster);
      if (type === 'delete') this.clusters.remove(namespace, cluster.metadata?.name ?? '');
      this.enqueueNamespace(namespace);
    });
    this.clusters.onEvent((event) => this.onClusterEvent(event));
    // Gained: reconciled now. Lost: reconciled to let go (the clients are already dropped).
    this.share.onChange((affected) => {
      for (const gw of this.gatewayDns.list())
        if (affected(gw.metadata?.namespace ?? '')) this.queue.add(objectKey(gw));
    });
  }

  private onClusterEvent(event: ClusterEvent): void {
    const namespace = namespaceOfKey(event.cluster);
    if (event.type !== 'change') {
      this.updateReachability();
      return this.enqueueNamespace(namespace);
    }
    const { kind, object } = event.change;
    // Our own writes come back here; they need no reconcile (the one that wrote them is done).
    // Both EndpointSlice watches (a source's and the mirror's) see a mirror slice.
    const objectKind = kind === 'MirrorEndpointSlice' ? 'EndpointSlice' : kind;
    if (
      (objectKind === 'DNSRecordSet' || objectKind === 'Service' || objectKind === 'EndpointSlice') &&
      this.reconciler.isOwnEcho(event.cluster, objectKind, event.change.type, object)
    )
      return;
    const now = Date.now();
    const mark = (key: string) => {
      if (!this.pendingSince.has(key)) this.pendingSince.set(key, now);
      this.queue.add(key);
    };
    const gatewayDns = this.gatewayDns.list(namespace);
    for (const key of mirrorKeysFor(
      kind,
      object,
      namespace,
      gatewayDns.map((gw) => ({ key: objectKey(gw), spec: gw.spec })),
    ))
      mark(key);
    // A source's change matters only to the GatewayDNS that select its cluster (the mirror's
    // consumers were marked above): in a team of ten, one Service name is ten GatewayDNS, one of them
    // selecting this cluster.
    const clusterName = event.cluster.slice(namespace.length + 1);
    const cluster =
      this.clusterObjects.get(clusterName, namespace) ?? this.departed.get(event.cluster)?.cluster;
    const selects = (gw: Obj<GatewayDNS>) =>
      !cluster ||
      !gw.spec?.clusterSelector ||
      matchesSelector(gw.spec.clusterSelector, cluster.metadata?.labels);
    switch (kind) {
      case 'Service': {
        const service = `${object.metadata?.namespace}/${object.metadata?.name}`;
        for (const gw of this.gatewayDns.list(namespace))
          if (gw.spec?.service === service && selects(gw)) mark(objectKey(gw));
        break;
      }
      case 'EndpointSlice': {
        const service = `${object.metadata?.namespace}/${object.metadata?.labels?.['kubernetes.io/service-name']}`;
        for (const gw of this.gatewayDns.list(namespace))
          if (gw.spec?.service === service && selects(gw)) mark(objectKey(gw));
        break;
      }
      case 'Node':
        for (const gw of this.gatewayDns.list(namespace))
          if (resolutionTypeOf(gw.spec?.resolutionType).nodePorts && selects(gw)) mark(objectKey(gw));
        break;
      case 'Namespace':
        if (object.metadata?.name === this.opts.recordsNamespace) this.enqueueNamespace(namespace);
        break;
      case 'DNSRecordSet': {
        // Drift: someone changed or deleted a set we own. Tenancy: only a GatewayDNS of this cluster's namespace owns it.
        const labels = object.metadata?.labels ?? {};
        if (labels[GATEWAYDNS_NAMESPACE_LABEL] === namespace && labels[GATEWAYDNS_NAME_LABEL])
          this.queue.add(`${namespace}/${labels[GATEWAYDNS_NAME_LABEL]}`);
        break;
      }
    }
  }

  /** The Clusters of a namespace: those of the informer and those that departed while paused. */
  private clustersOf(namespace: string): readonly Obj<ClusterObject>[] {
    const live = this.clusterObjects.list(namespace);
    const departed = [...this.departed.values()]
      .map((d) => d.cluster)
      .filter((c) => (c.metadata?.namespace ?? '') === namespace);
    return departed.length ? [...live, ...departed] : live;
  }

  /**
   * A paused Cluster that is deleted has been handed over (clusterctl move) or is about to be
   * recreated (GitOps): it stays, frozen, for the grace period, so that nothing is withdrawn in
   * between; the same Cluster coming back ends that at once.
   */
  private trackDeparture(type: 'add' | 'update' | 'delete', cluster: Obj<ClusterObject>): void {
    const key = objectKey(cluster);
    const known = this.departed.get(key);
    if (known && type !== 'delete') {
      clearTimeout(known.timer);
      this.departed.delete(key);
      return;
    }
    if (type !== 'delete' || frozenBy(cluster) !== 'Paused') return;
    const timer = setTimeout(
      () => {
        this.departed.delete(key);
        this.opts.log.info('paused Cluster did not come back: withdrawing its records', { cluster: key });
        this.enqueueNamespace(cluster.metadata?.namespace ?? '');
      },
      this.opts.departedGraceMs ?? 10 * 60_000,
    );
    timer.unref();
    this.departed.set(key, { cluster, timer });
    this.opts.log.info('paused Cluster deleted: kept frozen until it comes back', {
      cluster: key,
      graceMs: this.opts.departedGraceMs ?? 10 * 60_000,
    });
  }

  private updateReachability(): void {
    const all = this.clusters.connected();
    this.opts.metrics.clustersKnown = all.length;
    this.opts.metrics.clustersReachable = all.filter((c) => c.healthy).length;
  }

  private enqueueNamespace(namespace: string): void {
    for (const gw of this.gatewayDns.list(namespace)) this.queue.add(objectKey(gw));
  }

  private enqueueAll(): void {
    for (const gw of this.gatewayDns.list()) this.queue.add(objectKey(gw));
  }
}
