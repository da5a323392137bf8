// The ClusterProfile controller's own metrics, registered on the manager's registry.
import { registerRead, type Registry } from '../../runtime/metrics.js';

export class ProfileMetrics {
  /** Per Cluster (namespace/name): its profile's Joined and ControlPlaneHealthy, as last written. */
  readonly profiles = new Map<string, { joined: boolean; healthy: boolean }>();
  /** Clusters whose name another cluster manager's ClusterProfile already holds. */
  readonly conflicts = new Set<string>();

  constructor(registry: Registry) {
    registerRead(
      registry,
      'capi_dns_cluster_profile_joined',
      "A Cluster's ClusterProfile Joined condition (--cluster-profiles=produce): 1 True, 0 otherwise.",
      'gauge',
      ['cluster'],
      () => [...this.profiles].map(([cluster, p]) => [{ cluster }, p.joined ? 1 : 0]),
    );
    registerRead(
      registry,
      'capi_dns_cluster_profile_control_plane_healthy',
      "A Cluster's ClusterProfile ControlPlaneHealthy condition: 1 True, 0 otherwise.",
      'gauge',
      ['cluster'],
      () => [...this.profiles].map(([cluster, p]) => [{ cluster }, p.healthy ? 1 : 0]),
    );
    registerRead(
      registry,
      'capi_dns_cluster_profile_conflicts',
      "Clusters whose ClusterProfile name another cluster manager's profile holds (not published).",
      'gauge',
      [],
      () => [[{}, this.conflicts.size]],
    );
  }

  forget(cluster: string): void {
    this.profiles.delete(cluster);
    this.conflicts.delete(cluster);
  }
}
