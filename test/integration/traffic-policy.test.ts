// The traffic policy on real parts: a test environment of its own (management,
// cluster-a, cluster-b, cluster-c), the operator, a dns-server per workload
// cluster, and a real HTTP server per gateway on its LoadBalancer address.
// Failures are made in the data path only (the gateway's process stopped, or
// answering 503); every cluster's Kubernetes API says the same throughout.
// The management API server is stopped during a failover: the dns-servers
// decide alone.
import { CoreV1Api } from '@kubernetes/client-node';
import { dig, freePort, startDnsServer, type DnsProcess } from '../support/dns.js';
import { startGateway, type GatewayProcess } from '../support/gateway.js';
import { apply, eventually } from '../support/kube.js';
import {
  readGatewayDns,
  setLoadBalancer,
  startOperator,
  waitForReady,
  type OperatorProcess,
} from '../support/operator.js';
import { prepareClusters } from '../support/prepare.js';
import { startCluster, stopCluster, TestEnv } from '../support/testenv.js';

const NS = 'dev-team';
const CLUSTERS = ['cluster-a', 'cluster-b', 'cluster-c'] as const;
/** cluster-a in the first tier, cluster-c in the second; cluster-b runs no gateway and asks. */
const LABELS: Record<string, Record<string, string>> = {
  'cluster-a': { region: 'eu', app: 'kuard' },
  'cluster-b': { region: 'ap' },
  'cluster-c': { region: 'us', app: 'kuard' },
};
const ADDRESS: Record<string, string> = { 'cluster-a': '127.0.62.1', 'cluster-c': '127.0.62.3' };
const NAME = `kuard.gateway.${NS}.clusters.xcc.test`;
/** Period 1 s, two failures: the bound the issue sets is failureThreshold × period + 1 s. */
const CHECK = {
  protocol: 'HTTP',
  path: '/healthz',
  periodSeconds: 1,
  timeoutSeconds: 1,
  failureThreshold: 2,
  successThreshold: 2,
};
const BOUND_MS = 2 * 1000 + 1000;

describe('traffic policy: failover decided by each cluster from its own probes', () => {
  let env: TestEnv;
  let op: OperatorProcess | undefined;
  let port: number;
  const dns: Record<string, DnsProcess> = {};
  const gateways: Record<string, GatewayProcess | undefined> = {};

  const answer = async (cluster: string) =>
    (await dig(dns[cluster]!.port, ['+short', NAME, 'A'])).stdout.trim().split('\n').filter(Boolean).sort();

  /** Resolves with the milliseconds until every dns-server answers `want`. */
  const everywhereAnswers = async (want: string[], timeoutMs = 15_000): Promise<number> => {
    const began = Date.now();
    await Promise.all(
      CLUSTERS.map((c) =>
        eventually(
          async () => {
            const got = await answer(c);
            if (JSON.stringify(got) !== JSON.stringify(want))
              throw new Error(`${c}: ${got.join(' ')}, want ${want.join(' ')}`);
          },
          timeoutMs,
          50,
        ),
      ),
    );
    return Date.now() - began;
  };

  const gateway = async (cluster: string, healthStatus = 200) => {
    await gateways[cluster]?.stop();
    gateways[cluster] = await startGateway(ADDRESS[cluster]!, port, { healthStatus, name: cluster });
  };

  beforeAll(async () => {
    env = await TestEnv.start({ workloadClusters: [...CLUSTERS] });
    const management = env.kubeConfig('management');
    await prepareClusters(env, {
      namespace: NS,
      workloads: [...CLUSTERS],
      recordsNamespace: 'capi-dns',
      labels: LABELS,
    });
    port = await freePort();
    for (const cluster of ['cluster-a', 'cluster-c']) {
      await gateway(cluster);
      await setLoadBalancer(env.kubeConfig(cluster), 'projectcontour', 'envoy', [{ ip: ADDRESS[cluster]! }]);
    }
    op = await startOperator(env.cluster('management').kubeconfig, ['--namespace', NS, '--no-leader-elect']);
    for (const cluster of CLUSTERS)
      dns[cluster] = await startDnsServer([
        '--zone',
        'xcc.test',
        '--kubeconfig',
        env.cluster(cluster).kubeconfig,
        // The probe report for the GatewayDNS status, named as a Pod's would be.
        '--pod-name',
        `capi-dns-server-${cluster}`,
      ]);
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
        healthCheck: { ...CHECK, port },
      },
    };
    await apply(management, [kuard]);
    await waitForReady(management, NS, 'kuard', 'Ready');
  }, 240_000);

  afterAll(async () => {
    await op?.stop();
    await Promise.all(Object.values(dns).map((d) => d.stop()));
    await Promise.all(Object.values(gateways).map((g) => g?.stop()));
    await env?.stop();
  }, 60_000);

  it('answers the first tier while its gateway is healthy, in every cluster', async () => {
    await everywhereAnswers([ADDRESS['cluster-a']!]);
  });

  it('fails over when the gateway process stops, and back when it answers 200 again (not while 503)', async () => {
    await everywhereAnswers([ADDRESS['cluster-a']!]);
    await gateways['cluster-a']!.stop();
    const failover = await everywhereAnswers([ADDRESS['cluster-c']!]);
    process.stderr.write(`failover after the gateway stopped: ${failover} ms (bound ${BOUND_MS} ms)\n`);
    expect(failover).toBeLessThan(BOUND_MS + 2000); // the shared machine's slack beyond the bound
    await gateway('cluster-a', 503);
    await new Promise((r) => setTimeout(r, 3000));
    expect(await answer('cluster-b')).toEqual([ADDRESS['cluster-c']]);
    await gateway('cluster-a', 200);
    const recovery = await everywhereAnswers([ADDRESS['cluster-a']!]);
    process.stderr.write(`recovery after the gateway came back: ${recovery} ms\n`);
    expect(recovery).toBeLessThan(BOUND_MS + 2000);
  });

  it('shows in the GatewayDNS status who is unhealthy from where and which tier answers, with an Event each way', async () => {
    const management = env.kubeConfig('management');
    const degraded = async () =>
      (await readGatewayDns(management, NS, 'kuard'))?.status?.conditions?.find((c) => c.type === 'Degraded');
    const healthOf = async (cluster: string) =>
      (await readGatewayDns(management, NS, 'kuard'))?.status?.clusters?.find((c) => c.cluster === cluster)
        ?.health;
    await eventually(
      async () => expect(await degraded()).toMatchObject({ status: 'False', reason: 'AllHealthy' }),
      20_000,
      200,
    );
    expect(await healthOf('cluster-a')).toEqual({ healthyFrom: 3, reportingClusters: 3 });
    await gateways['cluster-a']!.stop();
    try {
      await everywhereAnswers([ADDRESS['cluster-c']!]);
      const began = Date.now();
      await eventually(
        async () =>
          expect(await degraded()).toMatchObject({
            status: 'True',
            reason: 'FailedOver',
            message:
              'cluster-a unhealthy from 3 of 3 reporting clusters (cluster-a, cluster-b, cluster-c); failed over from tier 0 to tier 1 (cluster-c) in cluster-a, cluster-b, cluster-c',
          }),
        20_000,
        200,
      );
      process.stderr.write(
        `status Degraded=FailedOver ${Date.now() - began} ms after every dns-server failed over\n`,
      );
      expect(await healthOf('cluster-a')).toEqual({
        healthyFrom: 0,
        reportingClusters: 3,
        unhealthyFrom: ['cluster-a', 'cluster-b', 'cluster-c'],
      });
    } finally {
      await gateway('cluster-a');
    }
    await eventually(
      async () => expect(await degraded()).toMatchObject({ status: 'False', reason: 'AllHealthy' }),
      20_000,
      200,
    );
    const events = await management.makeApiClient(CoreV1Api).listNamespacedEvent({
      namespace: NS,
      fieldSelector: 'involvedObject.name=kuard',
    });
    const reasons = events.items.map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['FailedOver', 'Recovered']));
  });

  it('fails over and back with the management API server stopped', async () => {
    await everywhereAnswers([ADDRESS['cluster-a']!]);
    await stopCluster(env.info, 'management');
    try {
      await gateways['cluster-a']!.stop();
      await everywhereAnswers([ADDRESS['cluster-c']!], BOUND_MS + 5000);
      await gateway('cluster-a');
      await everywhereAnswers([ADDRESS['cluster-a']!], BOUND_MS + 5000);
    } finally {
      await startCluster(env.info, 'management');
    }
  });

  it('with both tiers down, answers every gateway (answerAll, fail open)', async () => {
    await gateways['cluster-a']!.stop();
    await gateways['cluster-c']!.stop();
    try {
      await everywhereAnswers([ADDRESS['cluster-a']!, ADDRESS['cluster-c']!]);
    } finally {
      await gateway('cluster-a');
      await gateway('cluster-c');
    }
    await everywhereAnswers([ADDRESS['cluster-a']!]);
  });
});
