// The manager's Prometheus metrics, next to the default process and Node
// metrics of runtime/metrics.ts: build info, each controller's work queue and
// reconciles, the writes to workload clusters, shards, leader election and
// cluster connections. Each controller registers its own on the same registry
// (gatewaydns/metrics.ts, mcs/metrics.ts). The code counts into plain fields;
// the registry reads them when it is scraped, so no call site knows about
// prom-client. Where
// controller-runtime, client-go or Cluster API have a metric of the same
// meaning, it has their name and labels (controller-metrics.ts; docs/operating.md).
import { registerBuildInfo } from '../../../runtime/build-info.js';
import { Counter, Gauge, processRegistry, registerRead, type Registry } from '../../../runtime/metrics.js';
import {
  ControllerMetrics,
  registerControllerMetrics,
  type ControllerHistograms,
} from './controller-metrics.js';
import type { WriteGateStats } from './write-gate.js';

export class Metrics {
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
  readonly registry: Registry = processRegistry();
  private readonly controllers = new Map<string, ControllerMetrics>();
  private readonly controllerHistograms: ControllerHistograms;
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
    this.stateMetrics();
  }

  /** The work queue and reconcile metrics of one controller (controller-runtime's names). */
  controller(name: string, maxConcurrent: number): ControllerMetrics {
    const metrics = new ControllerMetrics(name, maxConcurrent, this.controllerHistograms);
    this.controllers.set(name, metrics);
    return metrics;
  }

  /** What the manager knows of the fleet: what the alerts of config/monitoring watch. */
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
  }

  /** The exposition text, as /metrics serves it. */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}
