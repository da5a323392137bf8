// config/monitoring on real parts: a real Prometheus (Debian's package)
// scraping a real operator and a real dns-server per workload cluster, with
// the alerting rules rendered from scripts/monitoring with durations in
// seconds. A test environment of its own (it stops an API server): a
// GatewayDNS with failover tiers and a health check, so that the traffic
// policy's metrics exist too. It holds docs/operating.md's metrics tables
// against what /metrics serves, runs every dashboard query and wants series
// from each, and stops a workload API server to watch CapiDnsClusterUnreachable
// go pending, then firing.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { dashboards } from '../../scripts/monitoring/dashboards.js';
import { documentedMetrics, servedMetrics } from '../../scripts/monitoring/metrics-table.js';
import { rulesFile } from '../../scripts/monitoring/render.js';
import { DEFAULT_RULE_OPTIONS } from '../../scripts/monitoring/rules.js';
import { dig, freePort, startDnsServer, type DnsProcess } from '../support/dns.js';
import { startGateway, type GatewayProcess } from '../support/gateway.js';
import { apply, eventually } from '../support/kube.js';
import { setLoadBalancer, startOperator, waitForReady, type OperatorProcess } from '../support/operator.js';
import { repoRoot } from '../support/paths.js';
import { prepareClusters } from '../support/prepare.js';
import { startPrometheus, type PrometheusProcess } from '../support/prometheus.js';
import { startCluster, stopCluster, TestEnv } from '../support/testenv.js';

const NS = 'dev-team';
const CLUSTERS = ['cluster-a', 'cluster-b'] as const;
const LABELS: Record<string, Record<string, string>> = {
  'cluster-a': { region: 'eu', app: 'kuard' },
  'cluster-b': { region: 'us', app: 'kuard' },
};
const ADDRESS: Record<string, string> = { 'cluster-a': '127.0.63.1', 'cluster-b': '127.0.63.2' };
const NAME = `kuard.gateway.${NS}.clusters.xcc.test`;
/** How long cluster-b must stay unreachable before the alert fires: long enough to see it pending. */
const UNREACHABLE_FOR_S = 10;

describe('monitoring: a real Prometheus scraping the operator and the dns-servers', () => {
  let env: TestEnv;
  let op: OperatorProcess | undefined;
  let prometheus: PrometheusProcess | undefined;
  const dns: Record<string, DnsProcess> = {};
  const gateways: GatewayProcess[] = [];

  beforeAll(async () => {
    env = await TestEnv.start({ workloadClusters: [...CLUSTERS] });
    const management = env.kubeConfig('management');
    await prepareClusters(env, {
      namespace: NS,
      workloads: [...CLUSTERS],
      recordsNamespace: 'capi-dns',
      labels: LABELS,
    });
    const port = await freePort();
    for (const cluster of CLUSTERS) {
      gateways.push(await startGateway(ADDRESS[cluster]!, port, { name: cluster }));
      await setLoadBalancer(env.kubeConfig(cluster), 'projectcontour', 'envoy', [{ ip: ADDRESS[cluster]! }]);
    }
    // Leader election on (the default): leader_election_master_status is served; ClusterProfiles
    // produced: their metrics are served (docs/operating.md lists them).
    op = await startOperator(env.cluster('management').kubeconfig, [
      '--namespace',
      NS,
      '--identity',
      'monitoring',
      '--cluster-profiles=produce',
    ]);
    for (const cluster of CLUSTERS)
      dns[cluster] = await startDnsServer(
        [
          '--zone',
          'xcc.test',
          '--kubeconfig',
          env.cluster(cluster).kubeconfig,
          '--pod-name',
          `capi-dns-server-${cluster}`,
        ],
        { health: true },
      );
    const kuard = {
      apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
      kind: 'GatewayDNS',
      metadata: { name: 'kuard', namespace: NS },
      spec: {
        clusterSelector: { matchLabels: { app: 'kuard' } },
        service: 'projectcontour/envoy',
        gatewayLabel: 'gateway',
        hostnames: [],
        answer: 'failover',
        failover: [
          { clusterSelector: { matchLabels: { region: 'eu' } } },
          { clusterSelector: { matchLabels: { region: 'us' } } },
        ],
        healthCheck: { protocol: 'TCP', port, periodSeconds: 1, timeoutSeconds: 1 },
      },
    };
    await apply(management, [kuard]);
    await waitForReady(management, NS, 'kuard', 'Ready', 60_000);
    prometheus = await startPrometheus({
      jobs: {
        [DEFAULT_RULE_OPTIONS.operatorJob]: [op.health],
        [DEFAULT_RULE_OPTIONS.dnsServerJob]: CLUSTERS.map((c) => `127.0.0.1:${dns[c]!.healthPort}`),
      },
      rules: rulesFile({ for: '2s', clusterUnreachableFor: `${UNREACHABLE_FOR_S}s`, rateWindow: '30s' }),
    });
    await eventually(async () => {
      const up = await prometheus!.query('up == 1');
      if (up.length !== 3) throw new Error(`${up.length} of 3 targets up`);
    }, 30_000);
  }, 300_000);

  afterAll(async () => {
    await prometheus?.stop();
    await op?.stop();
    await Promise.all(Object.values(dns).map((d) => d.stop()));
    await Promise.all(gateways.map((g) => g.stop()));
    await env?.stop();
  }, 60_000);

  it("serves on /metrics what docs/operating.md's tables list, with their types, on both sides", async () => {
    const doc = readFileSync(path.join(repoRoot(), 'docs', 'operating.md'), 'utf8');
    const served = async (hostPort: string) =>
      servedMetrics(await (await fetch(`http://${hostPort}/metrics`)).text());
    expect(await served(op!.health)).toEqual(documentedMetrics(doc, '### Operator'));
    expect(await served(`127.0.0.1:${dns['cluster-a']!.healthPort}`)).toEqual(
      documentedMetrics(doc, '### dns-server'),
    );
  });

  it('returns series for every query of both dashboards', async () => {
    // Traffic for the dns-server panels: answers, NXDOMAIN, a name outside the zone (REFUSED), UDP and TCP.
    for (const cluster of CLUSTERS)
      for (const args of [
        [NAME, 'A'],
        ['nothing.xcc.test', 'A'],
        ['example.com', 'A'],
        ['+tcp', NAME, 'A'],
      ])
        await dig(dns[cluster]!.port, args);
    const empty: string[] = [];
    for (const d of dashboards(DEFAULT_RULE_OPTIONS, '30s', '.*'))
      for (const panel of d.panels)
        for (const q of panel.queries) {
          try {
            await eventually(
              async () => {
                if ((await prometheus!.query(q.expr)).length === 0) throw new Error('no series');
              },
              20_000,
              500,
            );
          } catch {
            empty.push(`${d.uid} / ${panel.title}: ${q.expr}`);
          }
        }
    expect(empty).toEqual([]);
  }, 180_000);

  it('a workload API server stopped: CapiDnsClusterUnreachable goes pending, then firing', async () => {
    const ofClusterB = async () =>
      (await prometheus!.alerts()).filter(
        (a) => a.labels.alertname === 'CapiDnsClusterUnreachable' && a.labels.cluster_name === 'cluster-b',
      );
    expect(await ofClusterB()).toEqual([]);
    await stopCluster(env.info, 'cluster-b');
    try {
      const seen: string[] = [];
      let firingAfterMs = 0;
      await eventually(
        async () => {
          const [alert] = await ofClusterB();
          if (alert && seen.at(-1) !== alert.state) seen.push(alert.state);
          if (alert?.state !== 'firing') throw new Error(`alert ${alert?.state ?? 'inactive'}`);
          firingAfterMs = Date.now() - Date.parse(alert.activeAt);
        },
        90_000,
        250,
      );
      process.stderr.write(
        `monitoring: cluster-b stopped; alert ${seen.join(' then ')}, firing ${firingAfterMs} ms after it went pending\n`,
      );
      expect(seen).toEqual(['pending', 'firing']);
      // Pending for the rule's `for` (an evaluation per second), then firing.
      expect(firingAfterMs).toBeGreaterThanOrEqual(UNREACHABLE_FOR_S * 1000);
      const [alert] = await ofClusterB();
      expect(alert?.labels).toMatchObject({
        severity: 'warning',
        cluster_namespace: NS,
        cluster_name: 'cluster-b',
      });
    } finally {
      await startCluster(env.info, 'cluster-b');
    }
    // And it resolves once the cluster answers again.
    await eventually(async () => expect(await ofClusterB()).toEqual([]), 60_000, 500);
  }, 180_000);
});
