// Reads what each selected workload cluster says about the referenced
// Service, from the watched caches of the ClusterCache. An unreachable
// cluster keeps its last known addresses: from memory, or after a restart
// from the GatewayDNS's own status, so nothing is withdrawn because a cluster
// is briefly away.
import { FQDN_ANNOTATION, type GatewayDNS } from '../../../api/index.js';
import type { ClusterCache } from '../../manager/clusters/cache.js';
import { NODES, SERVICES, SERVICE_ENDPOINT_SLICES } from '../../manager/clusters/kinds.js';
import { GATEWAYS, ROUTES } from './kinds.js';
import { slicesOf } from '../../model/endpoints.js';
import type { ClusterFacts, ServiceObservation } from '../../model/facts.js';
import { ROUTE_KIND_NAMES, observeGateway } from './gateway-api.js';
import type { RemoteCluster } from '../../manager/clusters/remote.js';
import { RESOLUTION_TYPES } from '../../model/resolution-types.js';
import { frozenMessage, type Frozen } from '../../manager/clusters/lifecycle.js';
import { annotatedHostnames } from '../claims/hostnames.js';
import { sourceService } from '../apply/mirror/reconciler.js';
import type { EffectiveSpec } from '../../model/validate.js';

export interface SourceReaderOptions {
  clusters: ClusterCache;
  /** How long a reconcile waits for a newly started watch before calling the cluster unreachable. */
  firstSyncTimeoutMs: number;
}

export class SourceReader {
  private readonly lastKnown = new Map<string, ClusterFacts>();

  constructor(private readonly opts: SourceReaderOptions) {}

  /** Frozen clusters (paused, being deleted) are not read: their last known facts stand. */
  async factsFor(
    gw: GatewayDNS,
    spec: EffectiveSpec,
    clusters: string[],
    now: Date,
    frozen: ReadonlyMap<string, Frozen> = new Map(),
  ): Promise<ClusterFacts[]> {
    return Promise.all(
      clusters.map((c) => {
        const why = frozen.get(c);
        return why ? this.frozenFacts(gw, c, why) : this.factsOf(gw, spec, c, now);
      }),
    );
  }

  /** What was last published for a cluster the operator must leave alone, from memory or status. */
  private frozenFacts(gw: GatewayDNS, cluster: string, why: Frozen): ClusterFacts {
    const last = this.unreachable(
      gw,
      `${gw.metadata.namespace ?? ''}/${gw.metadata.name}|${cluster}`,
      cluster,
      '',
    );
    delete last.error;
    return { ...last, state: why, message: frozenMessage(why) };
  }

  /** The GatewayDNS is gone: forget what its clusters said. */
  forget(gatewayDnsKey: string): void {
    for (const key of this.lastKnown.keys())
      if (key.startsWith(`${gatewayDnsKey}|`)) this.lastKnown.delete(key);
  }

  private async factsOf(
    gw: GatewayDNS,
    spec: EffectiveSpec,
    cluster: string,
    now: Date,
  ): Promise<ClusterFacts> {
    const namespace = gw.metadata.namespace ?? '';
    const memoryKey = `${namespace}/${gw.metadata.name}|${cluster}`;
    const remote = this.opts.clusters.get(namespace, cluster);
    if (!remote)
      return this.unreachable(
        gw,
        memoryKey,
        cluster,
        this.opts.clusters.problem(namespace, cluster) ?? 'no client',
      );
    if (spec.gateway) {
      const seen = await this.observeGatewayOf(remote, spec.gateway);
      if ('unreachable' in seen) return this.unreachable(gw, memoryKey, cluster, seen.unreachable);
      return this.observed(gw, memoryKey, cluster, now, seen, { service: undefined, slices: [], nodes: [] });
    }
    const services = remote.informer(SERVICES, spec.serviceNamespace, { releasable: true });
    const type = RESOLUTION_TYPES[spec.resolutionType];
    const nodes = type.nodePorts ? remote.informer(NODES) : undefined;
    const slices = type.readsEndpointSlices
      ? remote.informer(SERVICE_ENDPOINT_SLICES, spec.serviceNamespace, { releasable: true })
      : undefined;
    // The cluster, not these watches, says whether it is reachable: when the API server goes,
    // whichever of its watches notices first makes it unreachable for every reader.
    const why = await remote.synced(
      [services, nodes, slices].filter((w) => w !== undefined),
      this.opts.firstSyncTimeoutMs,
    );
    if (why) return this.unreachable(gw, memoryKey, cluster, why);
    // A mirror we keep in this cluster (it consumed one before it was selected) is not the source.
    const service = sourceService(services.get(spec.serviceName, spec.serviceNamespace));
    const serviceSlices = slices ? slicesOf(slices.list(spec.serviceNamespace), spec.serviceName) : [];
    const observed = { service, slices: serviceSlices, nodes: nodes?.list() ?? [] };
    const seen = type.observe(observed.service, observed.slices, observed.nodes, spec);
    const fqdn = annotatedHostnames(service?.metadata?.annotations?.[FQDN_ANNOTATION]);
    if (fqdn.length) seen.annotatedHostnames = fqdn;
    return this.observed(gw, memoryKey, cluster, now, seen, observed);
  }

  /**
   * spec.gatewayRef: the Gateway and the routes of the cluster, from cluster-wide watches shared by
   * every GatewayDNS that names a Gateway there. A route kind whose CRD is not installed (404) is
   * read as none; Gateway API not installed at all is the cluster's state, not an error.
   */
  private async observeGatewayOf(
    remote: RemoteCluster,
    ref: NonNullable<EffectiveSpec['gateway']>,
  ): Promise<ServiceObservation | { unreachable: string }> {
    const gateways = remote.informer(GATEWAYS);
    const routes = ROUTE_KIND_NAMES.map((kind) => ({ kind, watch: remote.informer(ROUTES[kind]) }));
    await Promise.all(
      [gateways, ...routes.map((r) => r.watch)].map((w) =>
        w.waitForFirstAttempt(this.opts.firstSyncTimeoutMs),
      ),
    );
    if (remote.notServed(gateways))
      return {
        state: 'GatewayNotFound',
        addresses: [],
        ports: [],
        message:
          'Gateway API is not installed in this cluster (gateways.gateway.networking.k8s.io/v1 is not served)',
      };
    const gatewayWhy = remote.unreachableReason(gateways);
    if (gatewayWhy) return { unreachable: gatewayWhy };
    const served = [];
    for (const { kind, watch } of routes) {
      if (remote.notServed(watch)) continue;
      const why = remote.unreachableReason(watch);
      if (why) return { unreachable: `${kind}: ${why}` };
      for (const route of watch.list()) served.push({ kind, route });
    }
    return observeGateway(ref, gateways.get(ref.name, ref.namespace), served);
  }

  /** A reachable cluster's observation, remembered (for when it is not) with since when it shows these addresses. */
  private observed(
    gw: GatewayDNS,
    memoryKey: string,
    cluster: string,
    now: Date,
    seen: ServiceObservation,
    observed: NonNullable<ClusterFacts['observed']>,
  ): ClusterFacts {
    const previous = this.lastKnown.get(memoryKey) ?? fromStatus(gw, cluster);
    const unchanged =
      previous?.state === seen.state &&
      previous.addresses.join() === seen.addresses.join() &&
      previous.lastSeen;
    const facts: ClusterFacts = {
      cluster,
      ...seen,
      // Since when the cluster has shown these addresses: stable while nothing changes, so status is not rewritten.
      lastSeen: unchanged ? previous.lastSeen : now.toISOString(),
    };
    this.lastKnown.set(memoryKey, facts);
    return { ...facts, observed };
  }

  private unreachable(gw: GatewayDNS, memoryKey: string, cluster: string, error: string): ClusterFacts {
    const remembered = this.lastKnown.get(memoryKey);
    const previous = remembered ?? fromStatus(gw, cluster);
    return {
      cluster,
      state: 'Unreachable',
      ...(!remembered && previous ? { recoveredFromStatus: true } : {}),
      addresses: previous?.addresses ?? [],
      ports: previous?.ports ?? [],
      // Per-pod names and SRV records stay too, while they are remembered; across a restart the
      // cluster's record sets keep them (recoveredFromStatus).
      ...(previous?.endpoints ? { endpoints: previous.endpoints } : {}),
      ...(previous?.unreadyHostnames ? { unreadyHostnames: previous.unreadyHostnames } : {}),
      ...(previous?.annotatedHostnames ? { annotatedHostnames: previous.annotatedHostnames } : {}),
      ...(previous?.routeHostnames ? { routeHostnames: previous.routeHostnames } : {}),
      error,
      ...(previous?.lastSeen ? { lastSeen: previous.lastSeen } : {}),
    };
  }
}

/**
 * Last known addresses from status, for a cluster that is unreachable right
 * after an operator restart. Node ports are not kept in status, so a nodePort
 * GatewayDNS loses its SRV records for such a cluster until it is back.
 */
function fromStatus(gw: GatewayDNS, cluster: string): ClusterFacts | undefined {
  const entry = gw.status?.clusters?.find((c) => c.cluster === cluster);
  if (!entry?.addresses?.length) return undefined;
  return {
    cluster,
    state: 'Ready',
    addresses: entry.addresses,
    ports: [],
    ...(entry.lastSeen ? { lastSeen: entry.lastSeen } : {}),
  };
}
