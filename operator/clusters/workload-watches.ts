// The register of the lazily started watches of the workload clusters: a
// watch of Services or EndpointSlices in one (cluster, namespace) lives while
// at least one holder (a GatewayDNS, a multi-cluster Service) names it and
// stops when the last one lets go, so the operator watches only what some
// output needs. Holding does not start a watch: the readers start one on
// first use, after the reconcile has taken its holds, so no other holder's
// release can stop a watch a reader is about to use.
import { type ClusterCache } from './cache.js';
import type { ReleasableKind } from './remote.js';
import type { Logger } from '../runtime/log.js';
import { WatchHolds } from './watch-holds.js';

/** Per kind, the "<namespace>/<cluster>|<watched namespace>" items one holder needs. */
export type WatchNeeds = Record<ReleasableKind, string[]>;

const KINDS: readonly ReleasableKind[] = ['Service', 'EndpointSlice', 'MirrorEndpointSlice'];

export class WorkloadWatches {
  private readonly holds = new Map(KINDS.map((k) => [k, new WatchHolds()]));

  constructor(private readonly opts: { clusters: ClusterCache; log?: Logger }) {}

  /** The holder `key` now needs exactly `needs`: what no GatewayDNS needs any more stops. */
  hold(key: string, needs: WatchNeeds): void {
    for (const kind of KINDS) this.release(kind, this.holds.get(kind)?.set(key, needs[kind]) ?? []);
  }

  /** The holder is gone or invalid: it needs nothing. */
  drop(key: string): void {
    for (const kind of KINDS) this.release(kind, this.holds.get(kind)?.drop(key) ?? []);
  }

  /** What some holder holds now, per kind. */
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
