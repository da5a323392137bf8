// The alerting rules of capi-dns: the one source of config/monitoring's plain
// rules file and PrometheusRule (render.ts writes both). Each alert has a
// runbook line in docs/operating.md under its name, and series it must and
// must not fire on in rules.test.yaml (promtool test rules).
//
// Every aggregation keeps a `cluster` label: where rules are evaluated
// centrally (Thanos, Mimir) over several clusters whose pod IPs repeat, each
// cluster's series stay apart; where there is no such label, `by (cluster)`
// groups by the empty value and changes nothing.
//
// Annotations name the labels ({{ $labels.x }}) but not the value, so that the
// tests can expect them exactly (rule-tests.ts). The durations are parameters: the monitoring integration test renders a
// variant with seconds instead of minutes and watches an alert go pending,
// then firing, on a real Prometheus.

export interface RuleOptions {
  /** The `job` label of the operator's targets (config/monitoring's PodMonitor sets it). */
  operatorJob: string;
  /** The `job` label of the dns-servers' targets. */
  dnsServerJob: string;
  /** How long a workload cluster may stay unreachable before CapiDnsClusterUnreachable fires. */
  clusterUnreachableFor: string;
  /** Replaces every rule's `for` but CapiDnsClusterUnreachable's (tests); each rule's own when undefined. */
  for?: string;
  /** The range of rate() windows. */
  rateWindow: string;
  /** SERVFAIL answers, as a share of all, above which CapiDnsServerServfail fires. */
  servfailRatio: number;
  /** REFUSED answers, as a share of all, above which CapiDnsServerRefusing fires. */
  refusedRatio: number;
  /** Rate-limited responses a second (dropped and slipped) above which CapiDnsServerRateLimiting fires. */
  rateLimitedPerSecond: number;
  /** Seconds a change delivered to a dns-server may wait for its zone build. */
  zoneBuildPendingSeconds: number;
  /** Seconds a zone's secondary may stay behind the serial a dns-server serves (ADR 0216). */
  secondaryLagSeconds: number;
  /**
   * Seconds before the earliest signature of a signed zone expires below which
   * CapiDnsServerDnssecSignaturesExpiring fires (ADR 0106: re-signed daily once under 7 days).
   */
  dnssecExpirySeconds: number;
  /** Where docs/operating.md's runbook is published; each alert links to its anchor. */
  runbookUrl: string;
}

export const DEFAULT_RULE_OPTIONS: RuleOptions = {
  operatorJob: 'capi-dns-operator',
  dnsServerJob: 'capi-dns-server',
  clusterUnreachableFor: '10m',
  rateWindow: '5m',
  servfailRatio: 0.01,
  refusedRatio: 0.1,
  rateLimitedPerSecond: 100,
  zoneBuildPendingSeconds: 300,
  secondaryLagSeconds: 900,
  dnssecExpirySeconds: 3 * 86400,
  runbookUrl: 'https://github.com/capi-dns/capi-dns/blob/main/docs/operating.md',
};

export interface AlertRule {
  alert: string;
  expr: string;
  for: string;
  labels: { severity: 'critical' | 'warning' | 'info' };
  annotations: { summary: string; description: string; runbook_url: string };
}

export interface RuleGroup {
  name: string;
  rules: AlertRule[];
}

/** The alerts, grouped by the component they watch. */
export function ruleGroups(options: Partial<RuleOptions> = {}): RuleGroup[] {
  const o = { ...DEFAULT_RULE_OPTIONS, ...options };
  const op = `job="${o.operatorJob}"`;
  const dns = `job="${o.dnsServerJob}"`;
  const w = o.rateWindow;
  const alert = (
    name: string,
    expr: string,
    ownFor: string,
    severity: AlertRule['labels']['severity'],
    summary: string,
    description: string,
    /** Its own duration even when options.for is set (the one the integration test sets apart). */
    keepFor = false,
  ): AlertRule => ({
    alert: name,
    expr,
    for: keepFor ? ownFor : (o.for ?? ownFor),
    labels: { severity },
    annotations: { summary, description, runbook_url: `${o.runbookUrl}#${name.toLowerCase()}` },
  });
  const answers = (rcode: string) =>
    `sum by (cluster, instance) (rate(capi_dns_server_dns_responses_total{${dns},rcode="${rcode}"}[${w}]))` +
    ` / sum by (cluster, instance) (rate(capi_dns_server_dns_responses_total{${dns}}[${w}]))`;
  return [
    {
      name: 'capi-dns-operator',
      rules: [
        alert(
          'CapiDnsOperatorDown',
          `absent(up{${op}} == 1)`,
          '5m',
          'critical',
          'No capi-dns operator replica is up.',
          'Prometheus scrapes no replica of the capi-dns operator: nothing keeps the record sets of the workload clusters in step with their Services.',
        ),
        alert(
          'CapiDnsOperatorNoLeader',
          `max by (cluster, name) (leader_election_master_status{${op}}) < 1`,
          '5m',
          'critical',
          'No capi-dns operator replica holds the Lease {{ $labels.name }}.',
          'Replicas of the capi-dns operator are up, but none leads: none reconciles.',
        ),
        alert(
          'CapiDnsOperatorShardsUnheld',
          `sum by (cluster) (capi_dns_shards_held{${op}}) < max by (cluster) (capi_dns_shards{${op}})`,
          '5m',
          'critical',
          'Some shards of the capi-dns operator have no replica.',
          'Fewer shards are held than --shards: the management namespaces of the others are reconciled by no replica.',
        ),
        alert(
          'CapiDnsReconcileErrors',
          `sum by (cluster, controller) (rate(controller_runtime_reconcile_errors_total{${op}}[${w}])) > 0`,
          '15m',
          'warning',
          'The {{ $labels.controller }} controller keeps failing reconciles.',
          'Reconciles of the {{ $labels.controller }} controller have kept failing for 15 minutes; they are retried with backoff.',
        ),
        alert(
          'CapiDnsClusterUnreachable',
          `min by (cluster, cluster_namespace, cluster_name) (capi_dns_cluster_connection_up{${op}}) == 0`,
          o.clusterUnreachableFor,
          'warning',
          'Workload cluster {{ $labels.cluster_namespace }}/{{ $labels.cluster_name }} is unreachable.',
          "The operator's watches find the API server of cluster {{ $labels.cluster_namespace }}/{{ $labels.cluster_name }} not answering: its record sets are not updated, and its addresses are the last known.",
          true,
        ),
        alert(
          'CapiDnsRecordSetsStale',
          `max by (cluster, cluster_namespace, cluster_name) (capi_dns_recordsets_stale{${op}}) > 0`,
          '15m',
          'warning',
          'Record sets in cluster {{ $labels.cluster_namespace }}/{{ $labels.cluster_name }} are stale.',
          'Writes of record sets to cluster {{ $labels.cluster_namespace }}/{{ $labels.cluster_name }} have failed for 15 minutes: its dns-server answers what it held before.',
        ),
        alert(
          'CapiDnsGatewayDNSNotReady',
          `max by (cluster, namespace, gatewaydns) (capi_dns_gatewaydns_status_condition{${op},type="Ready",status!="True"}) == 1`,
          '15m',
          'warning',
          'GatewayDNS {{ $labels.namespace }}/{{ $labels.gatewaydns }} is not Ready.',
          'GatewayDNS {{ $labels.namespace }}/{{ $labels.gatewaydns }} has not been Ready for 15 minutes: its Ready condition says why.',
        ),
        alert(
          'CapiDnsServiceExportConflict',
          `max by (cluster, cluster_namespace, cluster_name, namespace, serviceexport) (capi_dns_serviceexport_conflict{${op}}) == 1`,
          '5m',
          'warning',
          'ServiceExport {{ $labels.namespace }}/{{ $labels.serviceexport }} in cluster {{ $labels.cluster_name }} is in Conflict.',
          'The exports of {{ $labels.namespace }}/{{ $labels.serviceexport }} disagree (KEP-1645): the ServiceImport follows the oldest export; the Conflict condition names the field.',
        ),
        alert(
          'CapiDnsTrafficFailedOver',
          `max by (cluster, namespace, gatewaydns) (capi_dns_traffic_failed_over_clusters{${op}}) > 0`,
          '1m',
          'warning',
          'GatewayDNS {{ $labels.namespace }}/{{ $labels.gatewaydns }} has failed over.',
          'Workload clusters answer {{ $labels.namespace }}/{{ $labels.gatewaydns }} from a later failover tier than their first: their first tier is unhealthy from there.',
        ),
        alert(
          'CapiDnsTrafficNoneHealthy',
          `max by (cluster, namespace, gatewaydns) (capi_dns_traffic_none_healthy_clusters{${op}}) > 0`,
          '1m',
          'critical',
          'No candidate of GatewayDNS {{ $labels.namespace }}/{{ $labels.gatewaydns }} is healthy from some cluster.',
          'Workload clusters find no candidate cluster of {{ $labels.namespace }}/{{ $labels.gatewaydns }} healthy: they answer as whenNoneHealthy says.',
        ),
        alert(
          'CapiDnsZoneNoExposedNameserver',
          `max by (cluster, dnszone, zone) (capi_dns_zone_exposed_nameservers{${op}}) == 0`,
          '5m',
          'critical',
          'DNSZone {{ $labels.dnszone }} ({{ $labels.zone }}) has no exposed dns-server in its NS set.',
          'No cluster serving {{ $labels.zone }} has an exposed dns-server with a load-balancer address that answers: resolvers outside the fleet reach the zone only through the names of spec.nameservers.names, if any (ADR 0215).',
        ),
        alert(
          'CapiDnsZoneKeySecretUnwatched',
          `max by (cluster, namespace, secret, status) (capi_dns_zone_secret_unwatched{${op}}) == 1`,
          '15m',
          'warning',
          'The operator cannot watch key Secret {{ $labels.namespace }}/{{ $labels.secret }} (HTTP {{ $labels.status }}).',
          "A DNSZone names this DNSSEC or TSIG key Secret, and the operator's watch of it does not run (HTTP 403: RBAC grants get but not list and watch; no status: the API server did not answer): a rotated key reaches the workload clusters only when the operator reads it again, every 30 s (DNSSEC) or 15 s (TSIG). Grant get, list and watch on that Secret (a Role with resourceNames), as docs/operating.md says under Rotating a key.",
        ),
      ],
    },
    {
      name: 'capi-dns-server',
      rules: [
        // Critical only when no replica answers: the targets of a cluster all down, or none left at
        // all (kubernetes-mixin's CoreDNSDown, absent(up == 1)); `up == 0` alone says nothing when
        // the targets vanish (the Deployment deleted, the PodMonitor not selecting) and pages for
        // one replica of two, which the Service routes around.
        alert(
          'CapiDnsServerDown',
          `sum by (cluster) (up{${dns}}) == 0 or absent(up{${dns}} == 1)`,
          '5m',
          'critical',
          'No dns-server replica is up.',
          'Prometheus scrapes no replica of the dns-server: names of other clusters stop resolving in the workload cluster. Evaluated over several clusters, the alert carries the cluster label of the one whose replicas are all down.',
        ),
        alert(
          'CapiDnsServerReplicaDown',
          `up{${dns}} == 0`,
          '5m',
          'warning',
          'dns-server {{ $labels.instance }} is down.',
          'Prometheus cannot scrape the dns-server at {{ $labels.instance }}; the other replicas answer.',
        ),
        alert(
          'CapiDnsServerServfail',
          `${answers('SERVFAIL')} > ${o.servfailRatio}`,
          '10m',
          'critical',
          'dns-server {{ $labels.instance }} answers SERVFAIL.',
          `More than ${o.servfailRatio * 100} % of the answers of {{ $labels.instance }} are SERVFAIL.`,
        ),
        alert(
          'CapiDnsServerRefusing',
          `${answers('REFUSED')} > ${o.refusedRatio}`,
          '10m',
          'warning',
          'dns-server {{ $labels.instance }} refuses many queries.',
          `More than ${o.refusedRatio * 100} % of the queries to {{ $labels.instance }} are REFUSED: names outside its zones, or zone transfers.`,
        ),
        alert(
          'CapiDnsServerRateLimiting',
          `sum by (cluster, instance) (rate(capi_dns_server_rate_limited_responses_total{${dns}}[${o.rateWindow}])) > ${o.rateLimitedPerSecond}`,
          '10m',
          'warning',
          'dns-server {{ $labels.instance }} rate-limits many responses.',
          `More than ${o.rateLimitedPerSecond} responses a second of {{ $labels.instance }} are held back by response rate limiting: a flood (a reflection attack using it), or a resolver farm behind one prefix that --rrl-responses-per-second is too low for.`,
        ),
        alert(
          'CapiDnsServerZoneNotRebuilt',
          `max by (cluster, instance) (capi_dns_server_zone_build_pending_seconds{${dns}}) > ${o.zoneBuildPendingSeconds}`,
          '1m',
          'warning',
          'dns-server {{ $labels.instance }} does not serve the latest records.',
          `A change delivered to {{ $labels.instance }} over ${o.zoneBuildPendingSeconds} s ago is not in its zones yet: the zone builds fail or do not run.`,
        ),
        // Zone transfer to the company's secondaries (issue 43): only where the dns-server offers it.
        alert(
          'CapiDnsServerTransfersFailing',
          `sum by (cluster, instance, zone) (rate(capi_dns_server_transfers_total{${dns},result=~"notauth|busy|abandoned|formerr"}[${w}])) > 0` +
            ` or sum by (cluster, instance, zone) (rate(capi_dns_server_notifies_total{${dns},result=~"failed|rejected"}[${w}])) > 0`,
          '15m',
          'warning',
          'Zone transfers of {{ $labels.zone }} from {{ $labels.instance }} fail.',
          'For 15 minutes, secondaries of {{ $labels.zone }} have failed to transfer it from {{ $labels.instance }} (TSIG refused, too many at once, cut short) or not answered its NOTIFY.',
        ),
        alert(
          'CapiDnsServerSecondaryBehind',
          `max by (cluster, instance, zone, secondary) (capi_dns_server_secondary_lag_seconds{${dns}}) > ${o.secondaryLagSeconds}`,
          '5m',
          'warning',
          'Secondary {{ $labels.secondary }} of {{ $labels.zone }} is behind {{ $labels.instance }}.',
          `Secondary {{ $labels.secondary }} has not taken the serial of {{ $labels.zone }} that {{ $labels.instance }} has served for over ${o.secondaryLagSeconds} s: it answers old data.`,
        ),
        alert(
          'CapiDnsServerDnssecSignaturesExpiring',
          `min by (cluster, instance, zone) (capi_dns_server_dnssec_signatures_expire_timestamp_seconds{${dns}}) - time() < ${o.dnssecExpirySeconds}`,
          '10m',
          'critical',
          'dns-server {{ $labels.instance }} serves signatures of {{ $labels.zone }} that expire soon.',
          `The earliest signature {{ $labels.instance }} serves for {{ $labels.zone }} expires in less than ${o.dnssecExpirySeconds / 86400} days: it has not signed again (builds failing, or no key since a restart while the management cluster was away). Validating resolvers will find the zone bogus once they expire.`,
        ),
      ],
    },
  ];
}
