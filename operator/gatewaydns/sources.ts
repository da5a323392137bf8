// Reads what each selected workload cluster says about the referenced
// Service, from the watched caches of the ClusterCache. An unreachable
// cluster keeps its last known addresses: from memory, or after a restart
// from the GatewayDNS's own status, so nothing is withdrawn because a cluster
// is briefly away.
import type { GatewayDNS } from '../../api/index.js';
import type { ClusterCache } from '../clusters/cache.js';
import { observeService, type ClusterFacts } from './facts.js';
import type { EffectiveSpec } from './validate.js';

export interface SourceReaderOptions {
  clusters: ClusterCache;
  /** How long a reconcile waits for a newly started watch before calling the cluster unreachable. */
  firstSyncTimeoutMs: number;
}

export class SourceReader {
  private readonly lastKnown = new Map<string, ClusterFacts>();

  constructor(private readonly opts: SourceReaderOptions) {}

  async factsFor(
    gw: GatewayDNS,
    spec: EffectiveSpec,
    clusters: string[],
    now: Date,
  ): Promise<ClusterFacts[]> {
    return Promise.all(clusters.map((c) => this.factsOf(gw, spec, c, now)));
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
    const services = remote.servicesIn(spec.serviceNamespace);
    const nodes = spec.resolutionType === 'nodePort' ? remote.nodes() : undefined;
    await Promise.all([
      services.waitForFirstAttempt(this.opts.firstSyncTimeoutMs),
      nodes?.waitForFirstAttempt(this.opts.firstSyncTimeoutMs),
    ]);
    // The cluster, not these two watches, says whether it is reachable: when the API server goes,
    // whichever of its watches notices first makes it unreachable for every reader.
    for (const w of [services, nodes]) {
      const why = w && remote.unreachableReason(w);
      if (why) return this.unreachable(gw, memoryKey, cluster, why);
    }
    const seen = observeService(
      services.get(spec.serviceName, spec.serviceNamespace),
      [...(nodes?.list() ?? [])],
      spec,
    );
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
    return facts;
  }

  private unreachable(gw: GatewayDNS, memoryKey: string, cluster: string, error: string): ClusterFacts {
    const previous = this.lastKnown.get(memoryKey) ?? fromStatus(gw, cluster);
    return {
      cluster,
      state: 'Unreachable',
      addresses: previous?.addresses ?? [],
      ports: previous?.ports ?? [],
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
