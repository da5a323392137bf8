// The GatewayDNS controller's own metrics, registered on the manager's
// registry: record sets written and withdrawn, stale targets, the status
// conditions, the traffic policy's health view, and propagation latency. The
// code counts into plain fields; the registry reads them when scraped.
import { Histogram, registerRead, type Registry } from '../../../runtime/metrics.js';

export interface TrafficHealth {
  unhealthyClusters: number;
  failedOverClusters: number;
  noneHealthyClusters: number;
}

/** A condition of an object's status, as its metric shows it. */
export interface ConditionState {
  type: string;
  status: string;
}

function splitKey(key: string): readonly [string, string] {
  const slash = key.indexOf('/');
  return [key.slice(0, slash), key.slice(slash + 1)];
}

export class GatewayDnsMetrics {
  recordSetsWritten = 0;
  recordSetsDeleted = 0;
  /**
   * Per GatewayDNS with a health check ("namespace/name"), from its dns-servers' probe reports:
   * candidate clusters unhealthy from some workload cluster, and workload clusters answering from a
   * later tier than their first, or from none.
   */
  readonly trafficHealth = new Map<string, TrafficHealth>();
  /** Degraded turning True (failovers and unhealthy candidates seen) and back to False. */
  trafficTransitions = { degraded: 0, recovered: 0 };
  /** Per GatewayDNS ("namespace/name"), the conditions of the status it was last given. */
  readonly gatewayDnsConditions = new Map<string, ConditionState[]>();
  /** Per GatewayDNS ("namespace/name"), the workload clusters ("namespace/name") its last write to failed. */
  readonly staleTargets = new Map<string, string[]>();
  private readonly propagation: Histogram;

  constructor(registry: Registry) {
    const counter = (name: string, help: string, value: () => number) =>
      registerRead(registry, name, help, 'counter', [], () => [[{}, value()]]);
    counter(
      'capi_dns_recordsets_written_total',
      'DNSRecordSets created or changed in workload clusters.',
      () => this.recordSetsWritten,
    );
    counter(
      'capi_dns_recordsets_deleted_total',
      'DNSRecordSets withdrawn from workload clusters.',
      () => this.recordSetsDeleted,
    );
    this.propagation = new Histogram({
      name: 'capi_dns_propagation_latency_seconds',
      help: 'From a change seen in a workload cluster to the record sets written everywhere.',
      buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
    this.stateMetrics(registry);
    this.trafficMetrics(registry);
  }

  /** Everything counted of one GatewayDNS, let go of with it. */
  forget(id: string): void {
    this.trafficHealth.delete(id);
    this.gatewayDnsConditions.delete(id);
    this.staleTargets.delete(id);
  }

  observePropagation(seconds: number): void {
    this.propagation.observe(seconds);
  }

  private stateMetrics(registry: Registry): void {
    registerRead(
      registry,
      'capi_dns_recordsets_stale',
      "GatewayDNSs whose last write of record sets to the workload cluster failed (retried with backoff): the cluster's record sets are not what they should be.",
      'gauge',
      ['cluster_namespace', 'cluster_name'],
      () => {
        const byCluster = new Map<string, number>();
        for (const clusters of this.staleTargets.values())
          for (const c of clusters) byCluster.set(c, (byCluster.get(c) ?? 0) + 1);
        return [...byCluster].map(([key, n]) => {
          const [cluster_namespace, cluster_name] = splitKey(key);
          return [{ cluster_namespace, cluster_name }, n];
        });
      },
    );
    registerRead(
      registry,
      'capi_dns_gatewaydns_status_condition',
      "The conditions of each GatewayDNS's status as the operator last wrote them: 1 per (type, status) it has.",
      'gauge',
      ['namespace', 'gatewaydns', 'type', 'status'],
      () =>
        [...this.gatewayDnsConditions].flatMap(([id, conditions]) => {
          const [namespace, gatewaydns] = splitKey(id);
          return conditions.map((c): [Record<string, string>, number] => [
            { namespace, gatewaydns, type: c.type, status: c.status },
            1,
          ]);
        }),
    );
  }

  private trafficMetrics(registry: Registry): void {
    const perGatewayDns = (name: string, help: string, field: keyof TrafficHealth) =>
      registerRead(registry, name, help, 'gauge', ['namespace', 'gatewaydns'], () =>
        [...this.trafficHealth].map(([id, h]) => {
          const [namespace = '', gatewaydns = ''] = id.split('/');
          return [{ namespace, gatewaydns }, h[field]];
        }),
      );
    perGatewayDns(
      'capi_dns_traffic_unhealthy_clusters',
      "Candidate clusters of a GatewayDNS that some workload cluster finds unhealthy (its dns-servers' probe reports).",
      'unhealthyClusters',
    );
    perGatewayDns(
      'capi_dns_traffic_failed_over_clusters',
      'Workload clusters answering a GatewayDNS from a later failover tier than their first.',
      'failedOverClusters',
    );
    perGatewayDns(
      'capi_dns_traffic_none_healthy_clusters',
      'Workload clusters finding no candidate of a GatewayDNS healthy (whenNoneHealthy decides).',
      'noneHealthyClusters',
    );
    registerRead(
      registry,
      'capi_dns_traffic_transitions_total',
      'GatewayDNS Degraded condition turning True (to: degraded) or back to False (to: recovered).',
      'counter',
      ['to'],
      () => [
        [{ to: 'degraded' }, this.trafficTransitions.degraded],
        [{ to: 'recovered' }, this.trafficTransitions.recovered],
      ],
    );
  }
}
