// The few Prometheus metrics the operator exposes on /metrics, in the text
// exposition format; no client library needed for counters, gauges and one histogram.
const LATENCY_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class Metrics {
  reconciles = 0;
  reconcileErrors = 0;
  recordSetsWritten = 0;
  recordSetsDeleted = 0;
  leader = 0;
  clustersReachable = 0;
  clustersKnown = 0;
  private readonly latencyCounts = LATENCY_BUCKETS.map(() => 0);
  private latencySum = 0;
  private latencyCount = 0;

  observePropagation(seconds: number): void {
    LATENCY_BUCKETS.forEach((b, i) => {
      if (seconds <= b) this.latencyCounts[i]!++;
    });
    this.latencySum += seconds;
    this.latencyCount++;
  }

  render(): string {
    const lines: string[] = [];
    const metric = (name: string, type: string, help: string, value: number) =>
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name} ${value}`);
    metric('capi_dns_reconciles_total', 'counter', 'GatewayDNS reconciles run.', this.reconciles);
    metric(
      'capi_dns_reconcile_errors_total',
      'counter',
      'GatewayDNS reconciles that failed.',
      this.reconcileErrors,
    );
    metric(
      'capi_dns_recordsets_written_total',
      'counter',
      'DNSRecordSets created or changed in workload clusters.',
      this.recordSetsWritten,
    );
    metric(
      'capi_dns_recordsets_deleted_total',
      'counter',
      'DNSRecordSets withdrawn from workload clusters.',
      this.recordSetsDeleted,
    );
    metric(
      'capi_dns_clusters_reachable',
      'gauge',
      'Workload clusters whose watches are connected.',
      this.clustersReachable,
    );
    metric('capi_dns_clusters_known', 'gauge', 'Workload clusters with a client.', this.clustersKnown);
    metric('capi_dns_leader', 'gauge', '1 when this replica holds the leader Lease.', this.leader);
    const h = 'capi_dns_propagation_latency_seconds';
    lines.push(
      `# HELP ${h} From a change seen in a workload cluster to the record sets written everywhere.`,
      `# TYPE ${h} histogram`,
    );
    LATENCY_BUCKETS.forEach((b, i) => lines.push(`${h}_bucket{le="${b}"} ${this.latencyCounts[i]}`));
    lines.push(
      `${h}_bucket{le="+Inf"} ${this.latencyCount}`,
      `${h}_sum ${this.latencySum}`,
      `${h}_count ${this.latencyCount}`,
    );
    return `${lines.join('\n')}\n`;
  }
}
