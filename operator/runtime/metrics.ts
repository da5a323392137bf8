// The operator's Prometheus metrics, next to the default process and Node
// metrics of process/metrics.ts. The code counts into plain fields (a
// reconcile does `metrics.reconciles++`); the registry reads them when it is
// scraped, so no call site knows about prom-client.
import { Counter, Gauge, Histogram, processRegistry, type Registry } from '../../process/metrics.js';
import type { WriteGateStats } from './write-gate.js';

export interface TrafficHealth {
  unhealthyClusters: number;
  failedOverClusters: number;
  noneHealthyClusters: number;
}

export class Metrics {
  reconciles = 0;
  reconcileErrors = 0;
  recordSetsWritten = 0;
  recordSetsDeleted = 0;
  leader = 0;
  /** Shards whose Lease this replica holds (--shards); read when scraped. */
  shards: () => number = () => 0;
  /** Shards gained or lost by this replica since it started. */
  shardChanges = 0;
  /**
   * Per GatewayDNS with a health check ("namespace/name"), from its dns-servers' probe reports:
   * candidate clusters unhealthy from some workload cluster, and workload clusters answering from a
   * later tier than their first, or from none.
   */
  readonly trafficHealth = new Map<string, TrafficHealth>();
  /** Degraded turning True (failovers and unhealthy candidates seen) and back to False. */
  trafficTransitions = { degraded: 0, recovered: 0 };
  clustersReachable = 0;
  clustersKnown = 0;
  readonly registry: Registry = processRegistry();
  private readonly propagation = new Histogram({
    name: 'capi_dns_propagation_latency_seconds',
    help: 'From a change seen in a workload cluster to the record sets written everywhere.',
    buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  /** @param writes the gate of the writes to workload clusters, read when scraped */
  constructor(writes?: { stats(): WriteGateStats }) {
    const counter = (name: string, help: string, value: () => number) =>
      new Counter({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.reset();
          this.inc(value());
        },
      });
    const gauge = (name: string, help: string, value: () => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.set(value());
        },
      });
    counter('capi_dns_reconciles_total', 'GatewayDNS reconciles run.', () => this.reconciles);
    if (writes) {
      counter(
        'capi_dns_workload_writes_total',
        'Writes (applies, deletes) started in workload clusters.',
        () => writes.stats().started,
      );
      gauge(
        'capi_dns_workload_writes_queued',
        'Writes to workload clusters waiting for their turn (--max-concurrent-writes, --workload-qps).',
        () => writes.stats().queued,
      );
      gauge(
        'capi_dns_workload_writes_in_flight',
        'Writes to workload clusters under way.',
        () => writes.stats().inFlight,
      );
    }
    counter(
      'capi_dns_reconcile_errors_total',
      'GatewayDNS reconciles that failed.',
      () => this.reconcileErrors,
    );
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
    gauge(
      'capi_dns_clusters_reachable',
      'Workload clusters whose watches are connected.',
      () => this.clustersReachable,
    );
    gauge('capi_dns_clusters_known', 'Workload clusters with a client.', () => this.clustersKnown);
    gauge('capi_dns_leader', '1 when this replica holds the leader Lease.', () => this.leader);
    gauge('capi_dns_shards_held', 'Shards whose Lease this replica holds (--shards).', () => this.shards());
    counter(
      'capi_dns_shard_changes_total',
      'Shards this replica gained or lost (--shards).',
      () => this.shardChanges,
    );
    this.trafficMetrics();
  }

  private trafficMetrics(): void {
    const health = this.trafficHealth;
    const perGatewayDns = (name: string, help: string, field: keyof TrafficHealth) =>
      new Gauge({
        name,
        help,
        labelNames: ['namespace', 'gatewaydns'],
        registers: [this.registry],
        collect() {
          this.reset();
          for (const [id, h] of health) {
            const [namespace = '', gatewaydns = ''] = id.split('/');
            this.set({ namespace, gatewaydns }, h[field]);
          }
        },
      });
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
    const transitions = this.trafficTransitions;
    new Counter({
      name: 'capi_dns_traffic_transitions_total',
      help: 'GatewayDNS Degraded condition turning True (to: degraded) or back to False (to: recovered).',
      labelNames: ['to'],
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc({ to: 'degraded' }, transitions.degraded);
        this.inc({ to: 'recovered' }, transitions.recovered);
      },
    });
  }

  observePropagation(seconds: number): void {
    this.propagation.observe(seconds);
  }

  /** The exposition text, as /metrics serves it. */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}
