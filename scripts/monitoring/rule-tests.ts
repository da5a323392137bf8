// For each alert of rules.ts, series it must fire on and series it must not,
// written out as a `promtool test rules` file (monitoring.test.ts runs it).
// Every scenario is evaluated once a minute with the default options; the
// expected annotations are the rule's, with {{ $labels.x }} filled in.
import { stringify } from 'yaml';
import { DEFAULT_RULE_OPTIONS, ruleGroups } from './rules.js';

const OP = `job="${DEFAULT_RULE_OPTIONS.operatorJob}"`;
const DNS = `job="${DEFAULT_RULE_OPTIONS.dnsServerJob}"`;

interface Scenario {
  name: string;
  /** promtool's input_series: a series selector and its values in expanding notation. */
  series: [string, string][];
  /** At each time, the alerts that fire (by the labels of each firing alert, besides severity). */
  checks: { at: string; alert: string; fires: Record<string, string>[] }[];
}

const CLUSTER_B = { cluster_namespace: 'dev-team', cluster_name: 'cluster-b' };

export const SCENARIOS: Scenario[] = [
  {
    name: 'operator down: every replica down for 5 minutes; not while one is up',
    series: [[`up{${OP},instance="op-1"}`, '1 1 0x15']],
    checks: [
      { at: '6m', alert: 'CapiDnsOperatorDown', fires: [] },
      // absent() of a comparison keeps no label.
      { at: '8m', alert: 'CapiDnsOperatorDown', fires: [{}] },
    ],
  },
  {
    name: 'operator down: one replica of two up',
    series: [
      [`up{${OP},instance="op-1"}`, '0x15'],
      [`up{${OP},instance="op-2"}`, '1x15'],
    ],
    checks: [{ at: '10m', alert: 'CapiDnsOperatorDown', fires: [] }],
  },
  {
    name: 'no leader among the replicas up; not when one leads',
    series: [
      [`leader_election_master_status{${OP},instance="op-1",name="capi-dns-controller"}`, '1 1 0x10'],
      [`leader_election_master_status{${OP},instance="op-2",name="capi-dns-controller"}`, '0x12'],
      [`leader_election_master_status{${OP},instance="op-1",name="other-lease"}`, '0 1x11'],
    ],
    checks: [
      { at: '6m', alert: 'CapiDnsOperatorNoLeader', fires: [] },
      { at: '8m', alert: 'CapiDnsOperatorNoLeader', fires: [{ name: 'capi-dns-controller' }] },
    ],
  },
  {
    name: 'shards unheld: a replica gone and its shards not taken over',
    series: [
      [`capi_dns_shards_held{${OP},instance="op-1"}`, '8x15'],
      [`capi_dns_shards_held{${OP},instance="op-2"}`, '8x3 0x12'],
      [`capi_dns_shards{${OP},instance="op-1"}`, '16x15'],
      [`capi_dns_shards{${OP},instance="op-2"}`, '16x15'],
    ],
    checks: [
      { at: '3m', alert: 'CapiDnsOperatorShardsUnheld', fires: [] },
      { at: '8m', alert: 'CapiDnsOperatorShardsUnheld', fires: [] },
      { at: '10m', alert: 'CapiDnsOperatorShardsUnheld', fires: [{}] },
    ],
  },
  {
    name: 'reconcile errors: one controller failing for 15 minutes, another that failed long ago',
    series: [
      [`controller_runtime_reconcile_errors_total{${OP},instance="op-1",controller="gatewaydns"}`, '0+1x30'],
      [`controller_runtime_reconcile_errors_total{${OP},instance="op-1",controller="mcs"}`, '5x30'],
    ],
    checks: [
      { at: '10m', alert: 'CapiDnsReconcileErrors', fires: [] },
      { at: '25m', alert: 'CapiDnsReconcileErrors', fires: [{ controller: 'gatewaydns' }] },
    ],
  },
  {
    name: 'cluster unreachable for longer than 10 minutes; a reachable one and a short outage not',
    series: [
      [
        `capi_dns_cluster_connection_up{${OP},instance="op-1",cluster_namespace="dev-team",cluster_name="cluster-a"}`,
        '1x25',
      ],
      [
        `capi_dns_cluster_connection_up{${OP},instance="op-1",cluster_namespace="dev-team",cluster_name="cluster-b"}`,
        '1 1 0x23',
      ],
      [
        `capi_dns_cluster_connection_up{${OP},instance="op-1",cluster_namespace="dev-team",cluster_name="cluster-c"}`,
        '1 0x5 1x19',
      ],
    ],
    checks: [
      { at: '11m', alert: 'CapiDnsClusterUnreachable', fires: [] },
      { at: '13m', alert: 'CapiDnsClusterUnreachable', fires: [CLUSTER_B] },
    ],
  },
  {
    name: 'record sets stale for 15 minutes; a write failing briefly not',
    series: [
      [
        `capi_dns_recordsets_stale{${OP},instance="op-1",cluster_namespace="dev-team",cluster_name="cluster-b"}`,
        '1x25',
      ],
      [
        `capi_dns_recordsets_stale{${OP},instance="op-1",cluster_namespace="dev-team",cluster_name="cluster-c"}`,
        '1x5 0x20',
      ],
    ],
    checks: [
      { at: '14m', alert: 'CapiDnsRecordSetsStale', fires: [] },
      { at: '16m', alert: 'CapiDnsRecordSetsStale', fires: [CLUSTER_B] },
    ],
  },
  {
    name: 'a GatewayDNS not Ready for 15 minutes; a Ready one not',
    series: [
      [
        `capi_dns_gatewaydns_status_condition{${OP},instance="op-1",namespace="dev-team",gatewaydns="gw",type="Ready",status="False"}`,
        '1x20',
      ],
      [
        `capi_dns_gatewaydns_status_condition{${OP},instance="op-1",namespace="dev-team",gatewaydns="ok",type="Ready",status="True"}`,
        '1x20',
      ],
      [
        `capi_dns_gatewaydns_status_condition{${OP},instance="op-1",namespace="dev-team",gatewaydns="ok",type="Degraded",status="False"}`,
        '1x20',
      ],
    ],
    checks: [
      { at: '14m', alert: 'CapiDnsGatewayDNSNotReady', fires: [] },
      { at: '16m', alert: 'CapiDnsGatewayDNSNotReady', fires: [{ namespace: 'dev-team', gatewaydns: 'gw' }] },
    ],
  },
  {
    name: 'a ServiceExport in Conflict',
    series: [
      [
        `capi_dns_serviceexport_conflict{${OP},instance="op-1",cluster_namespace="dev-team",cluster_name="cluster-a",namespace="shop",serviceexport="cart"}`,
        '_ 1x10',
      ],
    ],
    checks: [
      { at: '4m', alert: 'CapiDnsServiceExportConflict', fires: [] },
      {
        at: '7m',
        alert: 'CapiDnsServiceExportConflict',
        fires: [
          {
            ...{ cluster_namespace: 'dev-team', cluster_name: 'cluster-a' },
            namespace: 'shop',
            serviceexport: 'cart',
          },
        ],
      },
    ],
  },
  {
    name: 'failover active, and no candidate healthy; a GatewayDNS on its first tier not',
    series: [
      [
        `capi_dns_traffic_failed_over_clusters{${OP},instance="op-1",namespace="dev-team",gatewaydns="kuard"}`,
        '0 0 1x10',
      ],
      [
        `capi_dns_traffic_failed_over_clusters{${OP},instance="op-1",namespace="dev-team",gatewaydns="db"}`,
        '0x12',
      ],
      [
        `capi_dns_traffic_none_healthy_clusters{${OP},instance="op-1",namespace="dev-team",gatewaydns="kuard"}`,
        '0x4 2x8',
      ],
      [
        `capi_dns_traffic_none_healthy_clusters{${OP},instance="op-1",namespace="dev-team",gatewaydns="db"}`,
        '0x12',
      ],
    ],
    checks: [
      { at: '2m', alert: 'CapiDnsTrafficFailedOver', fires: [] },
      {
        at: '4m',
        alert: 'CapiDnsTrafficFailedOver',
        fires: [{ namespace: 'dev-team', gatewaydns: 'kuard' }],
      },
      { at: '4m', alert: 'CapiDnsTrafficNoneHealthy', fires: [] },
      {
        at: '6m',
        alert: 'CapiDnsTrafficNoneHealthy',
        fires: [{ namespace: 'dev-team', gatewaydns: 'kuard' }],
      },
    ],
  },
  {
    name: 'one dns-server replica of two down: a warning, not a page',
    series: [
      [`up{${DNS},instance="dns-1"}`, '1 1 0x10'],
      [`up{${DNS},instance="dns-2"}`, '1x12'],
    ],
    checks: [
      { at: '6m', alert: 'CapiDnsServerReplicaDown', fires: [] },
      {
        at: '8m',
        alert: 'CapiDnsServerReplicaDown',
        fires: [{ job: DEFAULT_RULE_OPTIONS.dnsServerJob, instance: 'dns-1' }],
      },
      { at: '8m', alert: 'CapiDnsServerDown', fires: [] },
    ],
  },
  {
    name: 'both dns-server replicas down: a page',
    series: [
      [`up{${DNS},instance="dns-1"}`, '1 1 0x10'],
      [`up{${DNS},instance="dns-2"}`, '1 1 0x10'],
    ],
    checks: [
      { at: '6m', alert: 'CapiDnsServerDown', fires: [] },
      // sum by (cluster) keeps no label but cluster, absent here.
      { at: '8m', alert: 'CapiDnsServerDown', fires: [{}] },
    ],
  },
  {
    name: 'the dns-server targets vanish (Deployment gone, PodMonitor selecting nothing): a page',
    series: [
      [`up{${DNS},instance="dns-1"}`, '1 1 1'],
      [`up{${DNS},instance="dns-2"}`, '1 1 1'],
    ],
    checks: [
      { at: '7m', alert: 'CapiDnsServerDown', fires: [] },
      // Stale after 5 minutes without samples (promtool's lookback), then 5 minutes pending.
      { at: '13m', alert: 'CapiDnsServerDown', fires: [{}] },
    ],
  },
  {
    name: 'evaluated centrally: every replica of one cluster down pages for that cluster, one of another not',
    series: [
      [`up{${DNS},cluster="a",instance="10.0.0.1:8080"}`, '0x12'],
      [`up{${DNS},cluster="a",instance="10.0.0.2:8080"}`, '0x12'],
      [`up{${DNS},cluster="b",instance="10.0.0.1:8080"}`, '1x12'],
      [`up{${DNS},cluster="b",instance="10.0.0.2:8080"}`, '0x12'],
    ],
    checks: [{ at: '8m', alert: 'CapiDnsServerDown', fires: [{ cluster: 'a' }] }],
  },
  {
    name: 'SERVFAIL (3 %) and REFUSED (32 %) answers of one dns-server; 5 % REFUSED of the other not',
    series: [
      [
        `capi_dns_server_dns_responses_total{${DNS},instance="dns-1",zone="xcc.test.",rcode="NOERROR"}`,
        '0+100x30',
      ],
      [
        `capi_dns_server_dns_responses_total{${DNS},instance="dns-1",zone="xcc.test.",rcode="SERVFAIL"}`,
        '0+5x30',
      ],
      [
        `capi_dns_server_dns_responses_total{${DNS},instance="dns-1",zone="dropped",rcode="REFUSED"}`,
        '0+50x30',
      ],
      [
        `capi_dns_server_dns_responses_total{${DNS},instance="dns-2",zone="xcc.test.",rcode="NOERROR"}`,
        '0+100x30',
      ],
      [
        `capi_dns_server_dns_responses_total{${DNS},instance="dns-2",zone="dropped",rcode="REFUSED"}`,
        '0+5x30',
      ],
    ],
    checks: [
      { at: '9m', alert: 'CapiDnsServerServfail', fires: [] },
      { at: '20m', alert: 'CapiDnsServerServfail', fires: [{ instance: 'dns-1' }] },
      { at: '20m', alert: 'CapiDnsServerRefusing', fires: [{ instance: 'dns-1' }] },
    ],
  },
  {
    name: 'a flood rate-limited by one dns-server (200/s), a few by the other (1/s)',
    series: [
      [`capi_dns_server_rate_limited_responses_total{${DNS},instance="dns-1",action="dropped"}`, '0+6000x30'],
      [`capi_dns_server_rate_limited_responses_total{${DNS},instance="dns-1",action="slipped"}`, '0+6000x30'],
      [`capi_dns_server_rate_limited_responses_total{${DNS},instance="dns-2",action="dropped"}`, '0+60x30'],
    ],
    checks: [
      { at: '5m', alert: 'CapiDnsServerRateLimiting', fires: [] },
      { at: '20m', alert: 'CapiDnsServerRateLimiting', fires: [{ instance: 'dns-1' }] },
    ],
  },
  {
    name: 'a DNSZone whose exposed dns-servers are all gone; one that keeps one',
    series: [
      [`capi_dns_zone_exposed_nameservers{${OP},dnszone="a",zone="a.test"}`, '2 1 0x10'],
      [`capi_dns_zone_exposed_nameservers{${OP},dnszone="b",zone="b.test"}`, '2 1x10'],
    ],
    checks: [
      { at: '3m', alert: 'CapiDnsZoneNoExposedNameserver', fires: [] },
      { at: '9m', alert: 'CapiDnsZoneNoExposedNameserver', fires: [{ dnszone: 'a', zone: 'a.test' }] },
    ],
  },
  {
    name: 'a key Secret not watched for 15 minutes; one whose watch came back',
    series: [
      [`capi_dns_zone_secret_unwatched{${OP},namespace="keys",secret="a-tsig",status="403"}`, '1x30'],
      [`capi_dns_zone_secret_unwatched{${OP},namespace="keys",secret="b-dnssec",status="403"}`, '1x5 _x25'],
    ],
    checks: [
      { at: '10m', alert: 'CapiDnsZoneKeySecretUnwatched', fires: [] },
      {
        at: '20m',
        alert: 'CapiDnsZoneKeySecretUnwatched',
        fires: [{ namespace: 'keys', secret: 'a-tsig', status: '403' }],
      },
    ],
  },
  {
    name: 'a change not built for over 5 minutes; a dns-server that builds not',
    series: [
      [`capi_dns_server_zone_build_pending_seconds{${DNS},instance="dns-1"}`, '0 0+60x12'],
      [`capi_dns_server_zone_build_pending_seconds{${DNS},instance="dns-2"}`, '0 30 0 45 0x10'],
    ],
    checks: [
      { at: '6m', alert: 'CapiDnsServerZoneNotRebuilt', fires: [] },
      { at: '9m', alert: 'CapiDnsServerZoneNotRebuilt', fires: [{ instance: 'dns-1' }] },
    ],
  },
  {
    name: 'transfers refused by TSIG for 15 minutes; NOTIFY unanswered; a zone whose transfers work',
    series: [
      [`capi_dns_server_transfers_total{${DNS},instance="dns-1",zone="a.test",result="notauth"}`, '0+2x30'],
      [
        `capi_dns_server_notifies_total{${DNS},instance="dns-1",zone="b.test",secondary="192.0.2.1#53",result="failed"}`,
        '0+1x30',
      ],
      [`capi_dns_server_transfers_total{${DNS},instance="dns-1",zone="c.test",result="ixfr"}`, '0+5x30'],
      [`capi_dns_server_transfers_total{${DNS},instance="dns-1",zone="c.test",result="notauth"}`, '0x30'],
      [
        `capi_dns_server_notifies_total{${DNS},instance="dns-1",zone="c.test",secondary="192.0.2.1#53",result="failed"}`,
        '0x30',
      ],
    ],
    checks: [
      { at: '10m', alert: 'CapiDnsServerTransfersFailing', fires: [] },
      {
        at: '25m',
        alert: 'CapiDnsServerTransfersFailing',
        fires: [
          { instance: 'dns-1', zone: 'a.test' },
          { instance: 'dns-1', zone: 'b.test' },
        ],
      },
    ],
  },
  {
    name: 'a secondary 15 minutes behind; one that keeps up',
    series: [
      [
        `capi_dns_server_secondary_lag_seconds{${DNS},instance="dns-1",zone="a.test",secondary="192.0.2.1"}`,
        '0+60x30',
      ],
      [
        `capi_dns_server_secondary_lag_seconds{${DNS},instance="dns-1",zone="a.test",secondary="192.0.2.2"}`,
        '0 1 0 2 0x26',
      ],
    ],
    checks: [
      { at: '10m', alert: 'CapiDnsServerSecondaryBehind', fires: [] },
      {
        at: '25m',
        alert: 'CapiDnsServerSecondaryBehind',
        fires: [{ instance: 'dns-1', zone: 'a.test', secondary: '192.0.2.1' }],
      },
    ],
  },
  {
    // promtool's clock starts at 0: an expiry 2.99 days after it is near, one of 6 days is not.
    name: 'signatures near expiry in one dns-server, fresh in another',
    series: [
      [
        `capi_dns_server_dnssec_signatures_expire_timestamp_seconds{${DNS},instance="dns-1",zone="xcc.test",key_tag="1"}`,
        '258000x30',
      ],
      [
        `capi_dns_server_dnssec_signatures_expire_timestamp_seconds{${DNS},instance="dns-2",zone="xcc.test",key_tag="1"}`,
        '518400x30',
      ],
    ],
    checks: [
      { at: '5m', alert: 'CapiDnsServerDnssecSignaturesExpiring', fires: [] },
      {
        at: '15m',
        alert: 'CapiDnsServerDnssecSignaturesExpiring',
        fires: [{ instance: 'dns-1', zone: 'xcc.test' }],
      },
    ],
  },
];

/** The `promtool test rules` file for SCENARIOS, reading the rules from `rulesFile`. */
export function ruleTestsFile(rulesFile: string): string {
  const rules = new Map(ruleGroups().flatMap((g) => g.rules.map((r) => [r.alert, r] as const)));
  const expand = (text: string, labels: Record<string, string>) =>
    text.replace(/\{\{ \$labels\.(\w+) \}\}/g, (_, name: string) => labels[name] ?? '');
  return stringify(
    {
      rule_files: [rulesFile],
      evaluation_interval: '1m',
      tests: SCENARIOS.map((s) => ({
        name: s.name,
        interval: '1m',
        input_series: s.series.map(([series, values]) => ({ series, values })),
        alert_rule_test: s.checks.map((c) => {
          const rule = rules.get(c.alert);
          if (!rule) throw new Error(`scenario "${s.name}": no alert ${c.alert}`);
          return {
            eval_time: c.at,
            alertname: c.alert,
            exp_alerts: c.fires.map((labels) => ({
              exp_labels: { ...rule.labels, ...labels },
              exp_annotations: Object.fromEntries(
                Object.entries(rule.annotations).map(([k, v]) => [k, expand(v, labels)]),
              ),
            })),
          };
        }),
      })),
    },
    { lineWidth: 0 },
  );
}

/** The alerts no scenario expects to fire: each must have one. */
export function alertsWithoutFiringScenario(): string[] {
  const firing = new Set(
    SCENARIOS.flatMap((s) => s.checks.filter((c) => c.fires.length).map((c) => c.alert)),
  );
  return ruleGroups()
    .flatMap((g) => g.rules.map((r) => r.alert))
    .filter((a) => !firing.has(a));
}
