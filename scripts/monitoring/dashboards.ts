// The Grafana dashboards of capi-dns, one per side (the operator on the
// management cluster, the dns-server in each workload cluster): the one source
// of config/monitoring's JSON and ConfigMaps. Every query is run against a
// real Prometheus scraping a real operator and dns-servers by
// test/integration/monitoring.test.ts, which wants series from each.
//
// A `cluster` variable selects the clusters where Prometheus, Thanos or Mimir
// holds several (its values: the `cluster` label; All, the default, also
// matches series without one); sums by instance keep the cluster, since pod
// IPs repeat across clusters.
import { DEFAULT_RULE_OPTIONS } from './rules.js';

export interface Query {
  expr: string;
  legend: string;
}

export interface Panel {
  title: string;
  /** Grafana's unit ("short", "s", "bytes", "percentunit", "reqps", …). */
  unit: string;
  description?: string;
  queries: Query[];
}

export interface Dashboard {
  uid: string;
  title: string;
  /** File name under config/monitoring/dashboards/. */
  file: string;
  panels: Panel[];
}

export function dashboards(
  jobs: { operatorJob: string; dnsServerJob: string } = DEFAULT_RULE_OPTIONS,
  rateWindow = '$__rate_interval',
  /** The clusters' regular expression: Grafana's variable, or `.*` where queries run without Grafana. */
  cluster = '$cluster',
): Dashboard[] {
  const op = `job="${jobs.operatorJob}",cluster=~"${cluster}"`;
  const dns = `job="${jobs.dnsServerJob}",cluster=~"${cluster}"`;
  const w = rateWindow;
  const q = (expr: string, legend: string): Query => ({ expr, legend });
  const processPanels = (job: string): Panel[] => [
    {
      title: 'Resident memory',
      unit: 'bytes',
      queries: [q(`process_resident_memory_bytes{${job}}`, '{{instance}}')],
    },
    {
      title: 'CPU',
      unit: 'percentunit',
      queries: [q(`rate(process_cpu_seconds_total{${job}}[${w}])`, '{{instance}}')],
    },
    {
      title: 'Event-loop lag (p99)',
      unit: 's',
      queries: [q(`nodejs_eventloop_lag_p99_seconds{${job}}`, '{{instance}}')],
    },
  ];
  return [
    {
      uid: 'capi-dns-operator',
      title: 'capi-dns / operator',
      file: 'capi-dns-operator.json',
      panels: [
        {
          title: 'Replicas up, leader and shards held',
          unit: 'short',
          queries: [
            q(`up{${op}}`, 'up {{instance}}'),
            q(`leader_election_master_status{${op}}`, 'leader {{instance}}'),
            q(`capi_dns_shards_held{${op}}`, 'shards {{instance}}'),
          ],
        },
        {
          title: 'Reconciles',
          unit: 'ops',
          queries: [
            q(
              `sum by (controller, result) (rate(controller_runtime_reconcile_total{${op}}[${w}]))`,
              '{{controller}} {{result}}',
            ),
          ],
        },
        {
          title: 'Reconcile time (p50, p99)',
          unit: 's',
          queries: [0.5, 0.99].map((p) =>
            q(
              `histogram_quantile(${p}, sum by (controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket{${op}}[${w}])))`,
              `{{controller}} p${p * 100}`,
            ),
          ),
        },
        {
          title: 'Work queue depth and wait (p99)',
          unit: 'short',
          queries: [
            q(`sum by (name) (workqueue_depth{${op}})`, 'depth {{name}}'),
            q(
              `histogram_quantile(0.99, sum by (name, le) (rate(workqueue_queue_duration_seconds_bucket{${op}}[${w}])))`,
              'wait p99 {{name}} (s)',
            ),
          ],
        },
        {
          title: 'Workload clusters reachable',
          unit: 'short',
          description: 'capi_dns_cluster_connection_up: 1 while the API server answers the watches.',
          queries: [
            q(
              `min by (cluster_namespace, cluster_name) (capi_dns_cluster_connection_up{${op}})`,
              '{{cluster_namespace}}/{{cluster_name}}',
            ),
          ],
        },
        {
          title: 'Record sets written and withdrawn',
          unit: 'ops',
          queries: [
            q(`sum(rate(capi_dns_recordsets_written_total{${op}}[${w}]))`, 'written'),
            q(`sum(rate(capi_dns_recordsets_deleted_total{${op}}[${w}]))`, 'withdrawn'),
            q(`sum(rate(capi_dns_workload_writes_total{${op}}[${w}]))`, 'writes started'),
          ],
        },
        {
          title: 'Propagation latency (p50, p99)',
          unit: 's',
          description: 'From a change seen in a workload cluster to the record sets written everywhere.',
          queries: [0.5, 0.99].map((p) =>
            q(
              `histogram_quantile(${p}, sum by (le) (rate(capi_dns_propagation_latency_seconds_bucket{${op}}[${w}])))`,
              `p${p * 100}`,
            ),
          ),
        },
        {
          title: 'Stale record sets, exports in Conflict',
          unit: 'short',
          description: 'Zero when all is well (hence "or vector(0)": a line at 0 rather than no data).',
          queries: [
            q(`sum(capi_dns_recordsets_stale{${op}}) or vector(0)`, 'stale (GatewayDNS × cluster)'),
            q(`sum(capi_dns_serviceexport_conflict{${op}}) or vector(0)`, 'ServiceExports in Conflict'),
          ],
        },
        {
          title: 'GatewayDNS conditions',
          unit: 'short',
          queries: [
            q(`sum by (type, status) (capi_dns_gatewaydns_status_condition{${op}})`, '{{type}}={{status}}'),
          ],
        },
        {
          title: 'Traffic policy: clusters unhealthy, failed over, none healthy',
          unit: 'short',
          queries: [
            q(
              `sum by (namespace, gatewaydns) (capi_dns_traffic_unhealthy_clusters{${op}})`,
              'unhealthy {{namespace}}/{{gatewaydns}}',
            ),
            q(
              `sum by (namespace, gatewaydns) (capi_dns_traffic_failed_over_clusters{${op}})`,
              'failed over {{namespace}}/{{gatewaydns}}',
            ),
            q(
              `sum by (namespace, gatewaydns) (capi_dns_traffic_none_healthy_clusters{${op}})`,
              'none healthy {{namespace}}/{{gatewaydns}}',
            ),
          ],
        },
        {
          title: 'Writes to workload clusters queued and in flight',
          unit: 'short',
          queries: [
            q(`sum(capi_dns_workload_writes_queued{${op}})`, 'queued'),
            q(`sum(capi_dns_workload_writes_in_flight{${op}})`, 'in flight'),
          ],
        },
        ...processPanels(op),
        {
          title: 'Versions',
          unit: 'short',
          queries: [q(`capi_dns_build_info{${op}}`, '{{instance}} {{version}} {{nodejs_version}}')],
        },
      ],
    },
    {
      uid: 'capi-dns-server',
      title: 'capi-dns / dns-server',
      file: 'capi-dns-server.json',
      panels: [
        {
          title: 'dns-servers up',
          unit: 'short',
          queries: [q(`up{${dns}}`, '{{instance}}')],
        },
        {
          title: 'Requests by zone and transport',
          unit: 'reqps',
          queries: [
            q(
              `sum by (zone, proto) (rate(capi_dns_server_dns_requests_total{${dns}}[${w}]))`,
              '{{zone}} {{proto}}',
            ),
          ],
        },
        {
          title: 'Requests by type',
          unit: 'reqps',
          queries: [q(`sum by (type) (rate(capi_dns_server_dns_requests_total{${dns}}[${w}]))`, '{{type}}')],
        },
        {
          title: 'Responses by rcode',
          unit: 'reqps',
          queries: [
            q(`sum by (rcode) (rate(capi_dns_server_dns_responses_total{${dns}}[${w}]))`, '{{rcode}}'),
          ],
        },
        {
          title: 'SERVFAIL and REFUSED share',
          unit: 'percentunit',
          queries: [
            q(
              `sum by (cluster, instance, rcode) (rate(capi_dns_server_dns_responses_total{${dns},rcode=~"SERVFAIL|REFUSED"}[${w}])) / ignoring (rcode) group_left sum by (cluster, instance) (rate(capi_dns_server_dns_responses_total{${dns}}[${w}]))`,
              '{{instance}} {{rcode}}',
            ),
          ],
        },
        {
          title: 'Request duration (p50, p99)',
          unit: 's',
          description: 'From the query read to its answer made: parse, lookup, encoding.',
          queries: [0.5, 0.99].map((p) =>
            q(
              `histogram_quantile(${p}, sum by (zone, le) (rate(capi_dns_server_dns_request_duration_seconds_bucket{${dns}}[${w}])))`,
              `{{zone}} p${p * 100}`,
            ),
          ),
        },
        {
          title: 'Records served and SOA serial',
          unit: 'short',
          queries: [
            q(`capi_dns_server_records{${dns}}`, 'records {{instance}}'),
            q(`capi_dns_server_record_problems{${dns}}`, 'skipped {{instance}}'),
          ],
        },
        {
          title: 'Zone builds, build wait and source errors',
          unit: 'short',
          queries: [
            q(`rate(capi_dns_server_zone_builds_total{${dns}}[${w}])`, 'builds/s {{instance}}'),
            q(`capi_dns_server_zone_build_pending_seconds{${dns}}`, 'pending s {{instance}}'),
            q(`rate(capi_dns_server_source_errors_total{${dns}}[${w}])`, 'source errors/s {{instance}}'),
          ],
        },
        {
          title: 'Age of each source',
          unit: 's',
          queries: [q(`capi_dns_server_last_sync_age_seconds{${dns}}`, '{{instance}} {{source}}')],
        },
        {
          title: 'Health checks: targets by state, probes',
          unit: 'short',
          queries: [
            q(
              `sum by (cluster, instance, state) (capi_dns_server_probe_targets{${dns}})`,
              '{{instance}} {{state}}',
            ),
            q(
              `sum by (cluster, instance, result) (rate(capi_dns_server_probes_total{${dns}}[${w}]))`,
              '{{instance}} probes {{result}}/s',
            ),
          ],
        },
        {
          title: 'Failover tier answering',
          unit: 'short',
          description: '0: the first tier; -1: none healthy.',
          queries: [q(`capi_dns_server_policy_answering_tier{${dns}}`, '{{instance}} {{name}} {{type}}')],
        },
        {
          title: 'TCP connections and closes',
          unit: 'short',
          queries: [
            q(`sum by (cluster, instance) (capi_dns_server_tcp_connections{${dns}})`, 'open {{instance}}'),
            q(
              `sum by (reason) (rate(capi_dns_server_tcp_connections_closed_total{${dns}}[${w}]))`,
              'closed/s {{reason}}',
            ),
          ],
        },
        ...processPanels(dns),
        {
          title: 'Versions',
          unit: 'short',
          queries: [q(`capi_dns_server_build_info{${dns}}`, '{{instance}} {{version}} {{nodejs_version}}')],
        },
      ],
    },
  ];
}

/** Grafana's dashboard JSON (schema 39), a datasource variable and one time-series panel per Panel, two per row. */
export function grafanaJson(d: Dashboard): Record<string, unknown> {
  const ds = { type: 'prometheus', uid: '${datasource}' };
  return {
    uid: d.uid,
    title: d.title,
    tags: ['capi-dns'],
    timezone: 'browser',
    schemaVersion: 39,
    editable: true,
    refresh: '30s',
    time: { from: 'now-6h', to: 'now' },
    templating: {
      list: [
        {
          name: 'datasource',
          label: 'Data source',
          type: 'datasource',
          query: 'prometheus',
          current: {},
          hide: 0,
        },
        {
          name: 'cluster',
          label: 'Cluster',
          type: 'query',
          datasource: ds,
          query: { query: 'label_values(up{job=~"capi-dns.*"}, cluster)', refId: 'cluster' },
          refresh: 2,
          includeAll: true,
          multi: true,
          // All matches series without a cluster label too: a single Prometheus has none.
          allValue: '.*',
          current: { text: 'All', value: '$__all' },
          hide: 0,
        },
      ],
    },
    panels: d.panels.map((p, i) => ({
      id: i + 1,
      type: 'timeseries',
      title: p.title,
      ...(p.description ? { description: p.description } : {}),
      datasource: ds,
      gridPos: { h: 8, w: 12, x: (i % 2) * 12, y: Math.floor(i / 2) * 8 },
      fieldConfig: { defaults: { unit: p.unit }, overrides: [] },
      options: { legend: { displayMode: 'list', placement: 'bottom' }, tooltip: { mode: 'multi' } },
      targets: p.queries.map((query, j) => ({
        datasource: ds,
        expr: query.expr,
        legendFormat: query.legend,
        refId: String.fromCharCode(65 + j),
      })),
    })),
  };
}
