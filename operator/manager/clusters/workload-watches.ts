// The register of the lazily started, releasable informers of the workload
// clusters: an informer of one kind in one (cluster, namespace) lives while
// at least one holder (an object some controller reconciles) names it and
// stops when the last one lets go, so the operator watches only what some
// output needs. Holding does not start a watch: the readers start one on
// first use, after the reconcile has taken its holds, so no other holder's
// release can stop a watch a reader is about to use.
import { type ClusterCache } from './cache.js';
import type { Logger } from '../runtime/log.js';
import { WatchHolds } from './watch-holds.js';

/** Per kind (ResourceType.kind), the "<namespace>/<cluster>|<watched namespace>" items one holder needs. */
export type WatchNeeds = Readonly<Record<string, readonly string[]>>;

export class WorkloadWatches {
  /** Per kind that some holder has named. */
  private readonly holds = new Map<string, WatchHolds>();

  constructor(private readonly opts: { clusters: ClusterCache; log?: Logger }) {}

  /** The holder `key` now needs exactly `needs`: what no holder needs any more stops. */
  hold(key: string, needs: WatchNeeds): void {
    for (const kind of Object.keys(needs)) if (!this.holds.has(kind)) this.holds.set(kind, new WatchHolds());
    // A kind the holder no longer names is a kind it needs nothing of.
    for (const [kind, holds] of this.holds) this.release(kind, holds.set(key, [...(needs[kind] ?? [])]));
  }

  /** The holder is gone or invalid: it needs nothing. */
  drop(key: string): void {
    for (const [kind, holds] of this.holds) this.release(kind, holds.drop(key));
  }

  /** What some holder holds now, per kind. */
  held(): WatchNeeds {
    return Object.fromEntries([...this.holds].map(([kind, holds]) => [kind, holds.held()]));
  }

  private release(kind: string, released: string[]): void {
    for (const item of released) {
      const [cluster = '', namespace = ''] = item.split('|');
      // Only a client that exists: releasing must not build one.
      const remote = this.opts.clusters.connected().find((r) => r.key === cluster);
      if (remote?.release(kind, namespace) === 'kept') continue;
      this.opts.log?.info('watch released', { kind, cluster, namespace });
    }
  }
}
