// The Cluster API inventory: the Clusters of the management cluster (and a
// paused one deleted, kept frozen for a grace period: departures.ts), their
// lifecycle (lifecycle.ts), and the "<cluster>-kubeconfig" Secret a control
// plane provider writes (kubeconfig-secrets.ts, ADR 0204).
import { createHash } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { kubeconfigSecretName } from '../../../api/index.js';
import type { ChangeType, WatchedResource } from '../runtime/informer.js';
import type { Logger } from '../runtime/log.js';
import { onClusterChange } from './cluster-changes.js';
import { DepartedClusters } from './departures.js';
import { KubeconfigSecrets } from './kubeconfig-secrets.js';
import { CLUSTER_API_GROUP, CLUSTER_API_VERSION, frozenBy, notConnectableYet } from './lifecycle.js';
import type { ClusterProvider, FleetCluster, KubeconfigSource } from './provider.js';
import { customResourceType, type InformerCache } from './resource.js';

/** Cluster API's Clusters, read by the manager's cache. */
export const CLUSTERS = customResourceType<FleetCluster>({
  kind: 'Cluster',
  group: CLUSTER_API_GROUP,
  version: CLUSTER_API_VERSION,
  plural: 'clusters',
});

export interface CapiProviderOptions {
  cache: InformerCache;
  /** The management cluster, where the kubeconfig Secrets are read. */
  kc: KubeConfig;
  /** Only this management namespace; all when undefined. */
  namespace?: string;
  relistMs?: number;
  /** How long a Cluster deleted while paused is still taken as there, frozen. */
  departedGraceMs?: number;
  log: Logger;
}

export class CapiClusterProvider implements ClusterProvider {
  readonly inventory = 'cluster-api';
  private readonly clusters: WatchedResource<FleetCluster>;
  /** The "<cluster>-kubeconfig" Secrets only: no other Secret's data is read (kubeconfig-secrets.ts). */
  private readonly secrets: KubeconfigSecrets;
  private readonly departed: DepartedClusters;
  private readonly credentialListeners: ((namespace: string, name: string) => void)[] = [];

  constructor(opts: CapiProviderOptions) {
    this.clusters = opts.cache.informer(CLUSTERS);
    this.secrets = new KubeconfigSecrets({
      kc: opts.kc,
      namespace: opts.namespace,
      log: opts.log,
      relistMs: opts.relistMs,
      onChange: (namespace, cluster) => this.credentialListeners.forEach((l) => l(namespace, cluster)),
    });
    opts.cache.addSource(this.secrets);
    this.departed = new DepartedClusters({ graceMs: opts.departedGraceMs, log: opts.log });
    // Registered before any controller's listener: a departure is tracked before a controller
    // reacts to the same change.
    onClusterChange(this.clusters, (type, cluster) => this.departed.track(type, cluster));
  }

  list(namespace?: string): readonly FleetCluster[] {
    return this.clusters.list(namespace);
  }

  get(namespace: string, name: string): FleetCluster | undefined {
    return this.clusters.get(name, namespace);
  }

  listKept(namespace: string): readonly FleetCluster[] {
    const live = this.clusters.list(namespace);
    const departed = this.departed.list(namespace);
    return departed.length ? [...live, ...departed] : live;
  }

  getKept(namespace: string, name: string): FleetCluster | undefined {
    return this.get(namespace, name) ?? this.departed.get(namespace, name);
  }

  onChange(listener: (type: ChangeType, cluster: FleetCluster) => void): void {
    onClusterChange(this.clusters, listener);
  }

  onGraceEnded(listener: (namespace: string) => void): void {
    this.departed.onGraceEnded(listener);
  }

  /**
   * As Cluster API's own cluster cache: no connection before Cluster API reports the Cluster up,
   * nor to a Cluster that is gone (a reconcile working from an older list would leak a client).
   * A paused one may be connected to: a GatewayDNS deleted meanwhile withdraws its sets there.
   */
  notConnectableYet(namespace: string, name: string): string | undefined {
    const cluster = this.getKept(namespace, name);
    if (!cluster) return `no Cluster ${namespace}/${name} in the management cluster`;
    return frozenBy(cluster) ? undefined : notConnectableYet(cluster);
  }

  kubeconfig(namespace: string, name: string): KubeconfigSource | { problem: string } {
    const secretName = kubeconfigSecretName(name);
    const value = this.secrets.get(namespace, secretName)?.data?.value;
    if (!value) {
      const why = this.secrets.problem(namespace, secretName);
      return {
        problem: why
          ? `no kubeconfig: ${why}`
          : `no kubeconfig: Secret ${namespace}/${secretName} with key "value"`,
      };
    }
    return {
      text: Buffer.from(value, 'base64').toString('utf8'),
      from: `Secret ${namespace}/${secretName}, key "value"`,
      fingerprint: createHash('sha256').update(value).digest('hex'),
    };
  }

  onCredentialsChange(listener: (namespace: string, name: string) => void): void {
    this.credentialListeners.push(listener);
  }

  stop(): void {
    this.departed.stop();
  }
}
