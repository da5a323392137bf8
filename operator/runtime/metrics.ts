// The operator's Prometheus metrics, next to the default process and Node
// metrics of process/metrics.ts. The code counts into plain fields (a
// record set written does `metrics.recordSetsWritten++`); the registry reads
// them when it is scraped, so no call site knows about prom-client. Where
// controller-runtime, client-go or Cluster API have a metric of the same
// meaning, it has their name and labels (controller-metrics.ts; docs/operating.md).
import { registerBuildInfo } from '../../process/build-info.js';
import {
  Counter,
  Gauge,
  Histogram,
  processRegistry,
  registerRead,
  type Registry,
} from '../../process/metrics.js';
import {
  ControllerMetrics,
  registerControllerMetrics,
  type ControllerHistograms,
} from './controller-metrics.js';
import type { WriteGateStats } from './write-gate.js';

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

export class Metrics {
  recordSetsWritten = 0;
  recordSetsDeleted = 0;
  /** client-go's leader election: the Lease's name and whether this replica holds it. */
  leaderElection: { name: string; leading: boolean } | undefined;
  /** Every workload cluster with a client ("namespace/name") and whether its API server answers; read when scraped. */
  clusters: () => { key: string; healthy: boolean | undefined }[] = () => [];
  /** The shards of --shards (0 without). */
  shardsConfigured = 0;
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
  /** Per GatewayDNS ("namespace/name"), the conditions of the status it was last given. */
  readonly gatewayDnsConditions = new Map<string, ConditionState[]>();
  /** Per GatewayDNS ("namespace/name"), the workload clusters ("namespace/name") its last write to failed. */
  readonly staleTargets = new Map<string, string[]>();
  /** ServiceExports whose Conflict condition is True: "cluster namespace/cluster name/export namespace/export name". */
  readonly exportConflicts = new Set<string>();
  readonly registry: Registry = processRegistry();
  private readonly controllers = new Map<string, ControllerMetrics>();
  private readonly controllerHistograms: ControllerHistograms;
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
    registerBuildInfo(this.registry, 'capi_dns_build_info', 'operator');
    this.controllerHistograms = registerControllerMetrics(this.registry, this.controllers);
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
      'capi_dns_recordsets_written_total',
      'DNSRecordSets created or changed in workload clusters.',
      () => this.recordSetsWritten,
    );
    counter(
      'capi_dns_recordsets_deleted_total',
      'DNSRecordSets withdrawn from workload clusters.',
      () => this.recordSetsDeleted,
    );
    gauge('capi_dns_shards_held', 'Shards whose Lease this replica holds (--shards).', () => this.shards());
    gauge(
      'capi_dns_shards',
      'Shards the management namespaces are hashed into (--shards; 0 without).',
      () => this.shardsConfigured,
    );
    counter(
      'capi_dns_shard_changes_total',
      'Shards this replica gained or lost (--shards).',
      () => this.shardChanges,
    );
    this.trafficMetrics();
    this.stateMetrics();
  }

  /** The work queue and reconcile metrics of one controller (controller-runtime's names). */
  controller(name: string, maxConcurrent: number): ControllerMetrics {
    const metrics = new ControllerMetrics(name, maxConcurrent, this.controllerHistograms);
    this.controllers.set(name, metrics);
    return metrics;
  }

  /** What the operator knows of the world, per object: what the alerts of config/monitoring watch. */
  private stateMetrics(): void {
    const splitKey = (key: string) => {
      const slash = key.indexOf('/');
      return [key.slice(0, slash), key.slice(slash + 1)] as const;
    };
    registerRead(
      this.registry,
      'leader_election_master_status',
      "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
      'gauge',
      ['name'],
      () =>
        this.leaderElection
          ? [[{ name: this.leaderElection.name }, this.leaderElection.leading ? 1 : 0]]
          : [],
    );
    registerRead(
      this.registry,
      'capi_dns_cluster_connection_up',
      "Whether the workload cluster's API server answers the operator's watches (as Cluster API's capi_cluster_cache_connection_up).",
      'gauge',
      ['cluster_namespace', 'cluster_name'],
      () =>
        this.clusters().map(({ key, healthy }) => {
          const [cluster_namespace, cluster_name] = splitKey(key);
          return [{ cluster_namespace, cluster_name }, healthy === false ? 0 : 1];
        }),
    );
    registerRead(
      this.registry,
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
      this.registry,
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
    registerRead(
      this.registry,
      'capi_dns_serviceexport_conflict',
      'ServiceExports whose Conflict condition is True (KEP-1645: the exports of the name disagree), 1 each.',
      'gauge',
      ['cluster_namespace', 'cluster_name', 'namespace', 'serviceexport'],
      () =>
        [...this.exportConflicts].map((key) => {
          const [cluster_namespace = '', cluster_name = '', namespace = '', serviceexport = ''] =
            key.split('/');
          return [{ cluster_namespace, cluster_name, namespace, serviceexport }, 1];
        }),
    );
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
