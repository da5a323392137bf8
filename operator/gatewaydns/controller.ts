// The GatewayDNS controller: management-cluster informers (GatewayDNS,
// Cluster, Namespace) and workload-cluster watches (through the manager's
// ClusterCache) only enqueue GatewayDNS keys; a work queue runs the reconciles
// (reconciler.ts). It builds nothing another controller uses: the caches,
// clients, writer and watch holds are the manager's.
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  GATEWAYDNS_NAME_LABEL,
  GATEWAYDNS_NAMESPACE_LABEL,
  SERVICE_NAME_LABEL,
  WORKLOAD_NAMESPACES_ANNOTATION,
  type DNSZone,
  type GatewayDNS,
} from '../../api/index.js';
import type { ClusterEvent } from '../manager/clusters/cache.js';
import type { Manager } from '../manager/manager.js';
import type { Runnable } from '../manager/runnable.js';
import { mirrorKeysFor } from './apply/mirror/events.js';
import { resolutionTypeOf } from '../model/resolution-types.js';
import { matchesSelector } from '../model/selector.js';
import { errorText } from '../manager/runtime/log.js';
import {
  keyOfObject,
  namespaceOfKey,
  objectKey,
  objectKeyId,
  parseObjectKeyId,
  WorkQueue,
  type ObjectKey,
} from '../manager/runtime/workqueue.js';
import { GatewayDnsReconciler } from './reconciler.js';
import { DNSZONES, GATEWAYDNS } from './kinds.js';
import type { Delegations } from './claims/hostnames.js';
import { GatewayDnsMetrics } from './status/metrics.js';
import type { WatchedResource } from '../manager/runtime/informer.js';

export interface GatewayDnsControllerOptions {
  domainSuffix: string;
  /** Further zones the dns-servers serve (--zone). */
  zones?: readonly string[];
  workers: number;
  /** Every GatewayDNS is reconciled again this often, whatever happened (a safety net, not needed for correctness). */
  resyncMs?: number;
}

type Obj<T> = T & KubernetesObject;

export class GatewayDnsController implements Runnable {
  readonly name = 'gatewaydns';
  private readonly queue: WorkQueue<ObjectKey>;
  private readonly reconciler: GatewayDnsReconciler;
  /** The grant annotation per management namespace as last seen: only a change of it enqueues. */
  private readonly seenGrant = new Map<string, string | undefined>();
  /** Generation and deletion state per GatewayDNS: a status-only update (often our own) enqueues nothing. */
  private readonly seenSpec = new Map<string, string>();
  /** When a workload-cluster change was first seen for a key not yet reconciled: for the latency metric. */
  private readonly pendingSince = new Map<string, number>();
  private resyncTimer?: NodeJS.Timeout;
  private readonly gatewayDns: WatchedResource<GatewayDNS & KubernetesObject>;
  private readonly dnsZones: WatchedResource<DNSZone & KubernetesObject>;
  /** The delegations in force per DNSZone as last seen: only a change of them enqueues. */
  private readonly seenZone = new Map<string, string>();
  private readonly metrics: GatewayDnsMetrics;

  constructor(
    private readonly mgr: Manager,
    private readonly opts: GatewayDnsControllerOptions,
  ) {
    const gatewayDns = mgr.cache.informer(GATEWAYDNS);
    this.gatewayDns = gatewayDns;
    this.dnsZones = mgr.cache.informer(DNSZONES);
    this.metrics = new GatewayDnsMetrics(mgr.metrics.registry);
    this.reconciler = new GatewayDnsReconciler({
      mgr,
      gatewayDns,
      domainSuffix: opts.domainSuffix,
      otherZones: opts.zones,
      delegations: () => this.delegations(),
      metrics: this.metrics,
      requeue: (keys) => keys.forEach((k) => this.queue.add(k)),
    });
    this.queue = new WorkQueue<ObjectKey>((key) => this.handle(key), {
      idOf: objectKeyId,
      concurrency: opts.workers,
      metrics: mgr.metrics.controller(this.name, opts.workers),
      baseDelayMs: 200,
      maxDelayMs: 30_000,
      onError: (key, err, retryInMs) =>
        mgr.log.warn('reconcile failed', { gatewaydns: objectKeyId(key), error: errorText(err), retryInMs }),
    });
    this.watch();
  }

  /** The caches have synced: every GatewayDNS is reconciled, and again every resync period. */
  start(): void {
    this.queue.start();
    this.enqueueAll();
    const resync = this.opts.resyncMs ?? 10 * 60_000;
    this.resyncTimer = setInterval(() => this.enqueueAll(), resync);
    this.resyncTimer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.resyncTimer);
    await this.queue.shutdown();
  }

  private async handle(key: ObjectKey): Promise<void> {
    const id = objectKeyId(key);
    if (!this.mgr.share.owns(key.namespace)) {
      // Another replica's (or no one's, until a shard is taken): let go, write nothing.
      this.pendingSince.delete(id);
      return this.reconciler.release(key);
    }
    const began = Date.now();
    const since = this.pendingSince.get(id);
    this.pendingSince.delete(id);
    // The queue counts the reconcile and its result (controller_runtime_reconcile_total).
    const result = await this.reconciler.reconcile(key);
    if (since !== undefined && result.written > 0)
      this.metrics.observePropagation((Date.now() - since) / 1000);
    this.mgr.log.debug('reconciled', { gatewaydns: id, ms: Date.now() - began, written: result.written });
    // Handled again once this pass is done (the queue runs a key added while it is handled afterwards).
    if (result.requeue) this.queue.add(key);
  }

  /** Watches only enqueue keys: the work happens in the reconcile. */
  private watch(): void {
    const { cache, clusters, share, provider } = this.mgr;
    this.gatewayDns.onChange((type, gw) => {
      const key = keyOfObject(gw);
      const id = objectKeyId(key);
      const signature = `${gw.metadata?.generation}|${gw.metadata?.deletionTimestamp ?? ''}|${(gw.metadata?.finalizers ?? []).join()}`;
      if (type === 'update' && this.seenSpec.get(id) === signature) return;
      if (type === 'delete') this.seenSpec.delete(id);
      else this.seenSpec.set(id, signature);
      // A change of one GatewayDNS can settle or start a name conflict with the others of its namespace.
      this.enqueueNamespace(gw.metadata?.namespace ?? '');
      this.queue.add(key);
    });
    // The delegations in force (status.enforced, which the DNSZone controller writes) move names
    // between namespaces of any team: every GatewayDNS looks again.
    this.dnsZones.onChange((type, zone) => {
      const id = zone.metadata?.name ?? '';
      const signature =
        type === 'delete'
          ? ''
          : JSON.stringify([zone.status?.enforced, zone.metadata?.deletionTimestamp ?? '']);
      if ((this.seenZone.get(id) ?? '') === signature) return;
      if (type === 'delete') this.seenZone.delete(id);
      else this.seenZone.set(id, signature);
      this.enqueueAll();
    });
    cache.namespaces.onChange((type, namespace) => {
      const name = namespace.metadata?.name ?? '';
      // Its labels too: a delegation's namespaceSelector may start or stop matching it.
      const grant =
        type === 'delete'
          ? undefined
          : JSON.stringify([
              namespace.metadata?.annotations?.[WORKLOAD_NAMESPACES_ANNOTATION],
              this.dnsZones.list().length ? namespace.metadata?.labels : undefined,
            ]);
      if (this.seenGrant.has(name) && this.seenGrant.get(name) === grant) return;
      this.seenGrant.set(name, grant);
      this.enqueueNamespace(name);
    });
    // The manager has tracked a departure and dropped a deleted Cluster's client by now.
    this.mgr.provider.onChange((_type, cluster) => this.enqueueNamespace(cluster.metadata?.namespace ?? ''));
    provider.onGraceEnded((namespace) => this.enqueueNamespace(namespace));
    clusters.onEvent((event) => this.onClusterEvent(event));
    // Gained: reconciled now. Lost: reconciled to let go (the clients are already dropped).
    share.onChange((affected) => {
      for (const gw of this.gatewayDns.list())
        if (affected(gw.metadata?.namespace ?? '')) this.queue.add(keyOfObject(gw));
    });
  }

  private onClusterEvent(event: ClusterEvent): void {
    const namespace = namespaceOfKey(event.cluster);
    if (event.type !== 'change') return this.enqueueNamespace(namespace);
    const { kind, object } = event.change;
    // Our own writes come back here; they need no reconcile (the one that wrote them is done).
    // Both EndpointSlice watches (a source's and the mirror's) see a mirror slice.
    const objectKind = kind === 'MirrorEndpointSlice' ? 'EndpointSlice' : kind;
    if (
      (objectKind === 'DNSRecordSet' || objectKind === 'Service' || objectKind === 'EndpointSlice') &&
      this.mgr.writer.isOwnEcho(event.cluster, objectKind, event.change.type, object)
    )
      return;
    const now = Date.now();
    const mark = (key: ObjectKey) => {
      const id = objectKeyId(key);
      if (!this.pendingSince.has(id)) this.pendingSince.set(id, now);
      this.queue.add(key);
    };
    const gatewayDns = this.gatewayDns.list(namespace);
    for (const key of mirrorKeysFor(
      kind,
      object,
      namespace,
      gatewayDns.map((gw) => ({ key: objectKey(gw), spec: gw.spec })),
    ))
      mark(parseObjectKeyId(key));
    // A source's change matters only to the GatewayDNS that select its cluster (the mirror's
    // consumers were marked above): in a team of ten, one Service name is ten GatewayDNS, one of them
    // selecting this cluster.
    const clusterName = event.cluster.slice(namespace.length + 1);
    const cluster = this.mgr.clusterNamed(namespace, clusterName);
    const selects = (gw: Obj<GatewayDNS>) =>
      !cluster ||
      !gw.spec?.clusterSelector ||
      matchesSelector(gw.spec.clusterSelector, cluster.metadata?.labels);
    switch (kind) {
      case 'Service': {
        const service = `${object.metadata?.namespace}/${object.metadata?.name}`;
        for (const gw of gatewayDns) if (gw.spec?.service === service && selects(gw)) mark(keyOfObject(gw));
        break;
      }
      case 'EndpointSlice': {
        const service = `${object.metadata?.namespace}/${object.metadata?.labels?.[SERVICE_NAME_LABEL]}`;
        for (const gw of gatewayDns) if (gw.spec?.service === service && selects(gw)) mark(keyOfObject(gw));
        break;
      }
      case 'Gateway': {
        const named = (gw: Obj<GatewayDNS>) =>
          gw.spec?.gatewayRef?.namespace === object.metadata?.namespace &&
          gw.spec?.gatewayRef?.name === object.metadata?.name;
        for (const gw of gatewayDns) if (named(gw) && selects(gw)) mark(keyOfObject(gw));
        break;
      }
      case 'HTTPRoute':
      case 'GRPCRoute':
      case 'TLSRoute':
        // A route moving from one Gateway to another concerns both, and an update carries only the
        // new parents: every GatewayDNS naming a Gateway in this cluster looks again (a few per team).
        for (const gw of gatewayDns) if (gw.spec?.gatewayRef && selects(gw)) mark(keyOfObject(gw));
        break;
      case 'Node':
        for (const gw of gatewayDns)
          if (resolutionTypeOf(gw.spec?.resolutionType).nodePorts && selects(gw)) mark(keyOfObject(gw));
        break;
      case 'Namespace':
        if (object.metadata?.name === this.mgr.recordsNamespace) this.enqueueNamespace(namespace);
        break;
      case 'ProbeReport':
        // A dns-server's view changed: the GatewayDNS with health checks show it.
        for (const gw of gatewayDns) if (gw.spec?.healthCheck) this.queue.add(keyOfObject(gw));
        break;
      case 'DNSRecordSet': {
        // Drift: someone changed or deleted a set we own. Tenancy: only a GatewayDNS of this cluster's namespace owns it.
        const labels = object.metadata?.labels ?? {};
        if (labels[GATEWAYDNS_NAMESPACE_LABEL] === namespace && labels[GATEWAYDNS_NAME_LABEL])
          this.queue.add({ namespace, name: labels[GATEWAYDNS_NAME_LABEL] });
        break;
      }
    }
  }

  /**
   * The DNSZones in force, oldest first (of two for one zone the older governs): a DNSZone being
   * deleted governs nothing any more, so what it governed is withdrawn (ADR 0213).
   */
  private delegations(): Delegations {
    const zones = this.dnsZones
      .list()
      .filter((z) => !z.metadata?.deletionTimestamp && z.status?.enforced)
      .sort(
        (a, b) =>
          new Date(a.metadata?.creationTimestamp ?? 0).getTime() -
            new Date(b.metadata?.creationTimestamp ?? 0).getTime() ||
          (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
      )
      .map((z) => ({ name: z.metadata?.name ?? '', enforced: z.status!.enforced! }));
    return { zones, labelsOf: (namespace) => this.mgr.cache.namespaces.get(namespace)?.metadata?.labels };
  }

  private enqueueNamespace(namespace: string): void {
    for (const gw of this.gatewayDns.list(namespace)) this.queue.add(keyOfObject(gw));
  }

  private enqueueAll(): void {
    for (const gw of this.gatewayDns.list()) this.queue.add(keyOfObject(gw));
  }
}
