// A paused Cluster that is deleted has been handed over (clusterctl move
// deletes the source's paused copy) or is about to be recreated (a GitOps
// tool): it stays, frozen, for a grace period, so that nothing is withdrawn in
// between; the same Cluster coming back ends that at once.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ChangeType } from '../runtime/informer.js';
import type { Logger } from '../runtime/log.js';
import { objectKey } from '../runtime/workqueue.js';
import { frozenBy, type ClusterObject } from './lifecycle.js';

type Cluster = ClusterObject & KubernetesObject;

export interface DeparturesOptions {
  /** How long a departed paused Cluster is still taken as there (default 10 min). */
  graceMs?: number;
  log: Logger;
}

export class DepartedClusters {
  /** By "namespace/name". */
  private readonly departed = new Map<string, { cluster: Cluster; timer: NodeJS.Timeout }>();
  private readonly listeners: ((namespace: string) => void)[] = [];

  constructor(private readonly opts: DeparturesOptions) {}

  /** The grace of a departed Cluster of `namespace` ended: what it published goes now. */
  onGraceEnded(listener: (namespace: string) => void): void {
    this.listeners.push(listener);
  }

  get(namespace: string, name: string): Cluster | undefined {
    return this.departed.get(`${namespace}/${name}`)?.cluster;
  }

  list(namespace: string): Cluster[] {
    return [...this.departed.values()]
      .map((d) => d.cluster)
      .filter((c) => (c.metadata?.namespace ?? '') === namespace);
  }

  /** A change of a Cluster, as the informer reports it. */
  track(type: ChangeType, cluster: Cluster): void {
    const key = objectKey(cluster);
    const known = this.departed.get(key);
    if (known && type !== 'delete') {
      clearTimeout(known.timer);
      this.departed.delete(key);
      return;
    }
    if (type !== 'delete' || frozenBy(cluster) !== 'Paused') return;
    const graceMs = this.opts.graceMs ?? 10 * 60_000;
    const timer = setTimeout(() => {
      this.departed.delete(key);
      this.opts.log.info('paused Cluster did not come back: withdrawing its records', { cluster: key });
      for (const listener of this.listeners) listener(cluster.metadata?.namespace ?? '');
    }, graceMs);
    timer.unref();
    this.departed.set(key, { cluster, timer });
    this.opts.log.info('paused Cluster deleted: kept frozen until it comes back', { cluster: key, graceMs });
  }

  stop(): void {
    for (const d of this.departed.values()) clearTimeout(d.timer);
  }
}
