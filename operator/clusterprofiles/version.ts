// The Kubernetes version of a workload cluster, for status.version: the
// version a ClusterClass Cluster is at (spec.topology.version), otherwise what
// its API server says (/version), asked through the ClusterCache's client at
// most every refreshMs per client, so that a reconcile costs no request.
import { VersionApi } from '@kubernetes/client-node';
import type { ClusterCache } from '../manager/clusters/cache.js';
import type { RemoteCluster } from '../manager/clusters/remote.js';
import { withTimeout } from '../manager/runtime/equal.js';

interface Asked {
  at: number;
  version?: string;
}

export class KubernetesVersions {
  private readonly asked = new WeakMap<RemoteCluster, Asked>();

  constructor(
    private readonly opts: { clusters: ClusterCache; refreshMs: number; requestTimeoutMs: number },
  ) {}

  /** The version, or undefined when not known now (the profile keeps the one it has). */
  async of(
    namespace: string,
    name: string,
    topologyVersion: string | undefined,
  ): Promise<string | undefined> {
    if (topologyVersion) return topologyVersion;
    const remote = this.opts.clusters.get(namespace, name);
    if (!remote) return undefined;
    const last = this.asked.get(remote);
    if (last && Date.now() - last.at < this.opts.refreshMs) return last.version;
    const asked: Asked = { at: Date.now(), version: last?.version };
    this.asked.set(remote, asked);
    try {
      const info = await withTimeout(
        remote.kc.makeApiClient(VersionApi).getCode(),
        this.opts.requestTimeoutMs,
        `version of cluster ${remote.key}`,
      );
      asked.version = info.gitVersion;
    } catch {
      // Unreachable now: the version last known stays, and the next reconcile after refreshMs asks again.
    }
    return asked.version;
  }
}
