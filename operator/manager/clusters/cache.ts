// The one owner of workload-cluster connections (after Cluster API's
// clustercache): a RemoteCluster per Cluster, built from its kubeconfig
// Secret "<cluster>-kubeconfig" (key "value") in the Cluster's namespace,
// kept while the Secret stays the same and rebuilt when it changes
// (rotation). Other reconcilers (e.g. a Corefile one) get the same clients
// and subscribe to the same events instead of opening their own connections.
import { reuseConnections } from '../../../runtime/kube-connections.js';
import type { Logger } from '../runtime/log.js';
import type { WriteGate } from '../runtime/write-gate.js';
import { namespaceOfKey } from '../runtime/workqueue.js';
import { WHOLE_FLEET, type Share } from '../sharding/share.js';
import { RemoteCluster, notAnswering, type RemoteChange } from './remote.js';
import type { ClusterProvider } from './provider.js';
import { loadUntrustedKubeconfig, STRICT_POLICY, type KubeconfigPolicy } from './kubeconfig.js';

export type ClusterEvent =
  /** An object watched in the workload cluster changed. */
  | { type: 'change'; cluster: string; change: RemoteChange }
  /**
   * A watch of the cluster connected or failed; the event says whether the
   * cluster as a whole is now reachable. Sent for every watch, not only when
   * the cluster flips, so that dependents read the cluster again after each.
   */
  | { type: 'reachable'; cluster: string }
  | { type: 'unreachable'; cluster: string; error?: string }
  /** The kubeconfig Secret changed or went away: the old client is gone, the next get() builds a new one. */
  | { type: 'reset'; cluster: string };

export interface ClusterCacheOptions {
  /** Where the clusters' credentials come from, and whether one may be connected to yet. */
  provider: Pick<ClusterProvider, 'kubeconfig' | 'notConnectableYet'>;
  log: Logger;
  relistMs?: number;
  /** What a kubeconfig Secret may ask of the operator (exec, skipping TLS verification); strict by default. */
  kubeconfigPolicy?: KubeconfigPolicy;
  /** Where the writes to every cluster queue (runtime/write-gate.ts). */
  writeGate?: WriteGate;
  /**
   * The namespaces this replica serves (ADR 0207); all when unset. No client is built for a
   * Cluster of another's namespace, every write is refused once its shard is lost, and the
   * clients of a lost namespace are dropped with their watches.
   */
  share?: Share;
  /** Sent with every request to a workload cluster: names this replica in the API servers' audit logs. */
  userAgent?: string;
}

interface Entry {
  remote: RemoteCluster;
  fingerprint: string;
}

export function clusterKey(namespace: string, cluster: string): string {
  return `${namespace}/${cluster}`;
}

export class ClusterCache {
  private readonly entries = new Map<string, Entry>();
  private readonly problems = new Map<string, string>();
  private readonly listeners: ((event: ClusterEvent) => void)[] = [];

  private readonly share: Share;

  constructor(private readonly opts: ClusterCacheOptions) {
    this.share = opts.share ?? WHOLE_FLEET;
    this.share.onChange((affected, held) => {
      if (held) return;
      for (const [key, entry] of [...this.entries])
        if (affected(namespaceOfKey(key))) {
          this.opts.log.info('shard lost: dropping the cluster client', { cluster: key });
          this.drop(key, entry);
        }
    });
  }

  onEvent(listener: (event: ClusterEvent) => void): void {
    this.listeners.push(listener);
  }

  /** The cluster's client and watches, built on first use; undefined when its kubeconfig is missing or bad. */
  get(namespace: string, cluster: string): RemoteCluster | undefined {
    const key = clusterKey(namespace, cluster);
    if (!this.share.owns(namespace)) {
      this.problems.set(key, notServed(namespace));
      return undefined;
    }
    const existing = this.entries.get(key);
    if (existing) return existing.remote;
    const waiting = this.opts.provider.notConnectableYet(namespace, cluster);
    if (waiting) {
      this.problems.set(key, waiting);
      return undefined;
    }
    const source = this.opts.provider.kubeconfig(namespace, cluster);
    if ('problem' in source) {
      this.problems.set(key, source.problem);
      return undefined;
    }
    // Untrusted input: parsed and checked field by field, never handed to loadFromString.
    const loaded = loadUntrustedKubeconfig(source.text, this.opts.kubeconfigPolicy ?? STRICT_POLICY);
    if (!loaded.ok) {
      this.setProblem(
        key,
        `kubeconfig of cluster ${key} refused (${source.from}): ${loaded.error}`,
        loaded.refusals.map((r) => r.field),
      );
      return undefined;
    }
    const kc = loaded.kc;
    this.problems.delete(key);
    reuseConnections(kc, { userAgent: this.opts.userAgent });
    const remote = new RemoteCluster({
      key,
      kc,
      relistMs: this.opts.relistMs,
      writeGate: this.opts.writeGate,
      fence: () => (this.share.owns(namespace) ? undefined : notServed(namespace)),
      onChange: (change) => this.emit({ type: 'change', cluster: key, change }),
      onHealth: ({ healthy, changed, error, watch }) => {
        if (changed)
          this.opts.log.info(healthy ? 'cluster reachable' : 'cluster unreachable', { cluster: key, error });
        // The API server answered, but not for this resource: nothing else logs it.
        if (!watch.healthy && !notAnswering(watch.status))
          this.opts.log.warn('watch failed', { cluster: key, path: watch.path, error: watch.error });
        this.emit(
          healthy ? { type: 'reachable', cluster: key } : { type: 'unreachable', cluster: key, error },
        );
      },
    });
    this.entries.set(key, { remote, fingerprint: source.fingerprint });
    this.opts.log.info('cluster client built', { cluster: key });
    return remote;
  }

  /** Records why get() gave nothing; logged once per distinct reason, not at every reconcile that asks. */
  private setProblem(key: string, problem: string, fields?: string[]): void {
    if (this.problems.get(key) === problem) return;
    this.problems.set(key, problem);
    this.opts.log.warn('cluster client not built', {
      cluster: key,
      error: problem,
      ...(fields ? { fields } : {}),
    });
  }

  /** Why the cluster may not be connected to yet (Cluster API does not report it up), or undefined. */
  waiting(namespace: string, cluster: string): string | undefined {
    return this.opts.provider.notConnectableYet(namespace, cluster);
  }

  /** Why get() gave nothing for this cluster. */
  problem(namespace: string, cluster: string): string | undefined {
    return this.problems.get(clusterKey(namespace, cluster));
  }

  /** The credentials of this cluster were added, changed or deleted: drop the client if they no longer match. */
  credentialsChanged(namespace: string, cluster: string): void {
    const key = clusterKey(namespace, cluster);
    this.problems.delete(key);
    const entry = this.entries.get(key);
    if (!entry) return this.emit({ type: 'reset', cluster: key });
    const source = this.opts.provider.kubeconfig(namespace, cluster);
    if (!('problem' in source) && source.fingerprint === entry.fingerprint) return;
    this.opts.log.info('kubeconfig changed: rebuilding the cluster client', { cluster: key });
    this.drop(key, entry);
  }

  /** The Cluster is gone. */
  remove(namespace: string, cluster: string): void {
    const key = clusterKey(namespace, cluster);
    this.problems.delete(key);
    const entry = this.entries.get(key);
    if (entry) this.drop(key, entry);
  }

  /** Every connected cluster: for metrics and for reconcilers that act per cluster. */
  connected(): RemoteCluster[] {
    return [...this.entries.values()].map((e) => e.remote);
  }

  async stop(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(all.map((e) => e.remote.stop()));
  }

  private drop(key: string, entry: Entry): void {
    this.entries.delete(key);
    // Writes still queued were for the client being dropped: they fail, and their reconcile runs again.
    this.opts.writeGate?.forget(key);
    void entry.remote.stop();
    this.emit({ type: 'reset', cluster: key });
  }

  private emit(event: ClusterEvent): void {
    for (const l of this.listeners) l(event);
  }
}

function notServed(namespace: string): string {
  return `namespace ${namespace} is not this replica's share now (another replica serves it)`;
}
