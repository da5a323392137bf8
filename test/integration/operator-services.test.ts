// Service-level discovery (resolution types clusterIP and headless) on the
// real API servers of the shared test environment, answered by a real
// dns-server per workload cluster and checked with dig. The workload API
// servers run no controllers: Services get their cluster IPs from the API
// server itself, and the EndpointSlices are written here exactly as the
// EndpointSlice controller would write them.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { registerWorkloadCluster } from '../support/capi.js';
import { dig, startDnsServer, type DnsProcess } from '../support/dns.js';
import { testEnvInfo } from '../support/environment.js';
import { apply, eventually, statusCode } from '../support/kube.js';
import { clusterOf, kubeConfigOf } from '../support/testenv.js';
import {
  deleteGatewayDns,
  ensureRecordsNamespace,
  startOperator,
  waitForReady,
  type OperatorProcess,
} from '../support/operator.js';
import { ensureNamespace } from '../support/capi.js';

const info = testEnvInfo();
const NS = 'op-svc';
const SVC_NS = 'op-svc-apps';
const CLUSTERS = ['cluster-a', 'cluster-b'] as const;
const management = kubeConfigOf(info, 'management');
const workload: Record<string, KubeConfig> = {
  'cluster-a': kubeConfigOf(info, 'cluster-a'),
  'cluster-b': kubeConfigOf(info, 'cluster-b'),
};

function gatewayDns(name: string, spec: Record<string, unknown>) {
  return {
    apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
    kind: 'GatewayDNS',
    metadata: { name, namespace: NS },
    spec: { clusterSelector: { matchLabels: { services: 'true' } }, ...spec },
  };
}

async function createService(
  cluster: string,
  name: string,
  spec: { clusterIP?: string; ports?: { name?: string; port: number; protocol?: string }[] },
): Promise<string[]> {
  const core = workload[cluster]!.makeApiClient(CoreV1Api);
  await ensureNamespace(workload[cluster]!, SVC_NS);
  try {
    await core.deleteNamespacedService({ name, namespace: SVC_NS });
  } catch (err) {
    if (statusCode(err) !== 404) throw err;
  }
  const created = await core.createNamespacedService({
    namespace: SVC_NS,
    body: {
      metadata: { name },
      spec: {
        selector: { app: name },
        ports: spec.ports ?? [{ name: 'tcp', port: 5432, protocol: 'TCP' }],
        ...(spec.clusterIP ? { clusterIP: spec.clusterIP } : {}),
      },
    },
  });
  return created.spec?.clusterIPs ?? [];
}

async function deleteQuietly(name: string): Promise<void> {
  await deleteGatewayDns(management, NS, name).catch((err: unknown) => {
    if (statusCode(err) !== 404) throw err;
  });
}

describe('service-level discovery', () => {
  let op: OperatorProcess;
  const dns: Record<string, DnsProcess> = {};

  /** What the dns-server of `cluster` answers, sorted (dig +short). */
  const answer = async (cluster: string, name: string, type = 'A', extra: string[] = []) =>
    (await dig(dns[cluster]!.port, ['+short', ...extra, name, type])).stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .sort();

  /** Waits until every cluster's dns-server answers `want`. */
  const everywhere = (name: string, type: string, want: string[], timeoutMs = 10_000) =>
    Promise.all(
      CLUSTERS.map((c) =>
        eventually(
          async () => {
            const got = await answer(c, name, type);
            if (JSON.stringify(got) !== JSON.stringify([...want].sort()))
              throw new Error(`${c}: ${name} ${type}: got ${got.join(' ')}, want ${want.join(' ')}`);
          },
          timeoutMs,
          50,
        ),
      ),
    );

  beforeAll(async () => {
    for (const cluster of CLUSTERS) {
      await registerWorkloadCluster(management, {
        namespace: NS,
        cluster,
        kubeconfigPath: clusterOf(info, cluster).kubeconfig,
        labels: { services: 'true' },
      });
      await ensureRecordsNamespace(workload[cluster]!);
    }
    op = await startOperator(clusterOf(info, 'management').kubeconfig, [
      '--namespace',
      NS,
      '--no-leader-elect',
    ]);
    for (const cluster of CLUSTERS) {
      dns[cluster] = await startDnsServer(
        ['--zone', 'xcc.test', '--kubeconfig', clusterOf(info, cluster).kubeconfig],
        { health: true },
      );
      await eventually(async () => {
        const res = await fetch(`http://127.0.0.1:${dns[cluster]!.healthPort}/readyz`);
        if (res.status !== 200) throw new Error(`readyz ${res.status}`);
      }, 15_000);
    }
  });

  afterAll(async () => {
    await op?.stop();
    await Promise.all(Object.values(dns).map((d) => d.stop()));
  });

  it('clusterIP: publishes the cluster IP under the per-cluster and cluster-independent names; a headless Service is reported', async () => {
    const [ipA] = await createService('cluster-a', 'db', {});
    await createService('cluster-b', 'db', { clusterIP: 'None' });
    expect(ipA).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    try {
      await apply(management, [
        gatewayDns('db', { service: `${SVC_NS}/db`, resolutionType: 'clusterIP', gatewayLabel: 'db' }),
      ]);
      await everywhere(`primary.db.cluster-a.${NS}.clusters.xcc.test`, 'A', [ipA!]);
      await everywhere(`primary.db.${NS}.clusters.xcc.test`, 'A', [ipA!]);
      expect(
        (await dig(dns['cluster-a']!.port, [`x.db.cluster-b.${NS}.clusters.xcc.test`, 'A'])).status,
      ).toBe('NXDOMAIN');
      const gw = await waitForReady(management, NS, 'db', 'Ready');
      const b = gw.status?.clusters?.find((c) => c.cluster === 'cluster-b') as
        { state: string; message?: string } | undefined;
      expect(b?.state).toBe('HeadlessService');
      expect(b?.message).toMatch(/resolutionType: headless/);
      expect(gw.status?.conditions?.find((c) => c.type === 'Ready')?.message).toMatch(
        /not published: cluster-b: HeadlessService/,
      );
    } finally {
      await deleteQuietly('db');
    }
  });
});
