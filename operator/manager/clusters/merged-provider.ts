// Both inventories at once (--inventory=both): Cluster API's Clusters and the
// ClusterProfiles of other cluster managers, in the same namespaces. A cluster
// is counted once: a profile this operator produced is left out by the profile
// provider (its cluster-manager label), and a profile with the name of a
// Cluster of the same namespace is the Cluster's (Cluster API wins).
import type { ChangeType } from '../runtime/informer.js';
import type { ClusterProvider, FleetCluster, KubeconfigSource } from './provider.js';

export class MergedClusterProvider implements ClusterProvider {
  readonly inventory = 'both';

  constructor(
    private readonly capi: ClusterProvider,
    private readonly profiles: ClusterProvider,
  ) {}

  list(namespace?: string): readonly FleetCluster[] {
    return this.merge(this.capi.list(namespace), this.profiles.list(namespace));
  }

  get(namespace: string, name: string): FleetCluster | undefined {
    return this.capi.get(namespace, name) ?? this.profiles.get(namespace, name);
  }

  listKept(namespace: string): readonly FleetCluster[] {
    return this.merge(this.capi.listKept(namespace), this.profiles.listKept(namespace));
  }

  getKept(namespace: string, name: string): FleetCluster | undefined {
    return this.capi.getKept(namespace, name) ?? this.profiles.getKept(namespace, name);
  }

  onChange(listener: (type: ChangeType, cluster: FleetCluster) => void): void {
    this.capi.onChange(listener);
    this.profiles.onChange((type, c) => {
      if (!this.capi.getKept(c.metadata?.namespace ?? '', c.metadata?.name ?? '')) listener(type, c);
    });
  }

  onGraceEnded(listener: (namespace: string) => void): void {
    this.capi.onGraceEnded(listener);
  }

  notConnectableYet(namespace: string, name: string): string | undefined {
    return this.owner(namespace, name).notConnectableYet(namespace, name);
  }

  kubeconfig(namespace: string, name: string): KubeconfigSource | { problem: string } {
    return this.owner(namespace, name).kubeconfig(namespace, name);
  }

  onCredentialsChange(listener: (namespace: string, name: string) => void): void {
    this.capi.onCredentialsChange(listener);
    this.profiles.onCredentialsChange(listener);
  }

  stop(): void {
    this.capi.stop();
    this.profiles.stop();
  }

  private owner(namespace: string, name: string): ClusterProvider {
    return this.capi.getKept(namespace, name) ? this.capi : this.profiles;
  }

  private merge(clusters: readonly FleetCluster[], profiles: readonly FleetCluster[]): FleetCluster[] {
    const names = new Set(clusters.map((c) => `${c.metadata?.namespace}/${c.metadata?.name}`));
    return [
      ...clusters,
      ...profiles.filter((p) => !names.has(`${p.metadata?.namespace}/${p.metadata?.name}`)),
    ];
  }
}
