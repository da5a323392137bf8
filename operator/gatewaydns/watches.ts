// Which watches of the workload clusters each GatewayDNS needs, and the one
// place that stops them: a watch of Services or EndpointSlices in one
// (cluster, namespace) lives while at least one GatewayDNS names that
// (cluster, namespace) and stops when the last one lets go (or is deleted, or
// becomes invalid), so the operator watches only what some GatewayDNS names.
// Holding does not start a watch: the readers start one on first use, after
// the reconcile has taken its holds, so no other GatewayDNS's release can stop
// a watch a reader is about to use.
import { clusterKey, type ClusterCache } from '../clusters/cache.js';
import type { ReleasableKind } from '../clusters/remote.js';
import type { Logger } from '../runtime/log.js';
import { WatchHolds } from './holds.js';
import { RESOLUTION_TYPES } from '../model/resolution-types.js';
import type { EffectiveSpec } from '../model/validate.js';

/** Per kind, the "<namespace>/<cluster>|<watched namespace>" items one GatewayDNS needs. */
export type WatchNeeds = Record<ReleasableKind, string[]>;

const KINDS: readonly ReleasableKind[] = ['Service', 'EndpointSlice', 'MirrorEndpointSlice'];

export interface WatchInput {
  /** The GatewayDNS's namespace: its clusters are Clusters of that namespace. */
  namespace: string;
  /** undefined for a GatewayDNS being deleted with an invalid spec: only its mirrors' withdrawal reads. */
  spec: EffectiveSpec | undefined;
  selected: string[];
  /** Every workload cluster of the namespace: where mirrors are written and withdrawn. */
  targets: string[];
  /** Namespaces of the mirror Services it keeps or still has to withdraw. */
  mirrorNamespaces: string[];
}

/**
 * Pure. The source Service's namespace in each selected cluster (its
 * EndpointSlices too, for headless and clusterIP, which follow pod readiness);
 * the mirrors' namespaces in every workload cluster, where the mirror writer
 * reads Services and our EndpointSlices.
 */
export function watchesNamedBy(input: WatchInput): WatchNeeds {
  const items = (clusters: string[], namespaces: string[]) =>
    [
      ...new Set(clusters.flatMap((c) => namespaces.map((n) => `${clusterKey(input.namespace, c)}|${n}`))),
    ].sort();
  const spec = input.spec;
  const sources = spec ? items(input.selected, [spec.serviceNamespace]) : [];
  const mirrors = items(input.targets, input.mirrorNamespaces);
  return {
    Service: [...new Set([...sources, ...mirrors])].sort(),
    EndpointSlice: spec && RESOLUTION_TYPES[spec.resolutionType].readsEndpointSlices ? sources : [],
    MirrorEndpointSlice: mirrors,
  };
}

export class WorkloadWatches {
  private readonly holds = new Map(KINDS.map((k) => [k, new WatchHolds()]));

  constructor(private readonly opts: { clusters: ClusterCache; log?: Logger }) {}

  /** The GatewayDNS `key` now needs exactly `needs`: what no GatewayDNS needs any more stops. */
  hold(key: string, needs: WatchNeeds): void {
    for (const kind of KINDS) this.release(kind, this.holds.get(kind)?.set(key, needs[kind]) ?? []);
  }

  /** The GatewayDNS is gone or invalid: it needs nothing. */
  drop(key: string): void {
    for (const kind of KINDS) this.release(kind, this.holds.get(kind)?.drop(key) ?? []);
  }

  /** What some GatewayDNS holds now, per kind. */
  held(): WatchNeeds {
    return Object.fromEntries(KINDS.map((k) => [k, this.holds.get(k)?.held() ?? []])) as WatchNeeds;
  }

  private release(kind: ReleasableKind, released: string[]): void {
    for (const item of released) {
      const [cluster = '', namespace = ''] = item.split('|');
      // Only a client that exists: releasing must not build one.
      const remote = this.opts.clusters.connected().find((r) => r.key === cluster);
      if (remote?.release(kind, namespace) === 'kept') continue;
      this.opts.log?.info('watch released', { kind, cluster, namespace });
    }
  }
}
