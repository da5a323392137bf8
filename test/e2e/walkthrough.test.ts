// End to end: the README's walkthrough as the demo runs it, then what a
// platform team would try next. Every process it starts is stopped in
// afterAll, also when a test fails.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { CustomObjectsApi, CoreV1Api } from '@kubernetes/client-node';
import { addressesFor, KUARD_NAME, NAMESPACE, Walkthrough } from '../../demo/walkthrough.js';
import { parseDig } from '../support/dns.js';
import { eventually } from '../support/kube.js';
import { metricsAt } from '../support/operator.js';
import { startCluster, stopCluster } from '../support/testenv.js';
import { sumMetric } from '../support/metrics.js';

const run = promisify(execFile);
const ANY_CLUSTER_NAME = `kuard.gateway.${NAMESPACE}.clusters.xcc.test`;
const addresses = addressesFor('127.0.20');

interface DigAnswer {
  status: string;
  addresses: string[];
}

/** One real dig query through a cluster's CoreDNS; the status and the A/AAAA data of the answer. */
async function dig(server: string, name: string): Promise<DigAnswer> {
  const { stdout } = await run('dig', [`@${server}`, name, '+tries=1', '+time=2']);
  const result = parseDig(stdout);
  const addresses = result.answer
    .map((l) => l.split(' '))
    .filter((f) => f[3] === 'A' || f[3] === 'AAAA')
    .map((f) => f[4] ?? '')
    .sort();
  return { status: result.status, addresses };
}

async function expectAnswer(server: string, name: string, want: string[], timeoutMs = 10_000): Promise<void> {
  await eventually(
    async () => {
      const got = await dig(server, name);
      if (got.status !== 'NOERROR' || JSON.stringify(got.addresses) !== JSON.stringify([...want].sort()))
        throw new Error(
          `${name} @${server}: ${got.status} ${got.addresses.join(',')}, want ${want.join(',')}`,
        );
    },
    timeoutMs,
    50,
  );
}

async function expectNxdomain(server: string, name: string, timeoutMs = 10_000): Promise<void> {
  await eventually(
    async () => {
      const got = await dig(server, name);
      if (got.status !== 'NXDOMAIN') throw new Error(`${name} @${server}: ${got.status}, want NXDOMAIN`);
    },
    timeoutMs,
    50,
  );
}

describe('the walkthrough, end to end', () => {
  let w: Walkthrough;
  const coreDnsA = addresses.coreDns['cluster-a'] ?? '';
  const coreDnsB = addresses.coreDns['cluster-b'] ?? '';

  beforeAll(async () => {
    w = await Walkthrough.run({ addresses, keepLogsOnFailure: false });
  }, 300_000);

  afterAll(async () => {
    await w?.stop();
  }, 120_000);

  it('curls kuard in cluster-a by its generated name from a pod in cluster-b', async () => {
    const body = await w.workload('cluster-b').pod.curl(`http://${KUARD_NAME}`);
    expect(body).toContain('kuard: hello from cluster-a');
  });

  it('answers a changed LoadBalancer address through CoreDNS within a second', async () => {
    const next = '127.0.20.51';
    const began = Date.now();
    await w.setLoadBalancerAddress('cluster-a', next);
    await expectAnswer(coreDnsB, KUARD_NAME, [next], 5_000);
    const ms = Date.now() - began;
    process.stderr.write(`LoadBalancer change → answer through cluster-b's CoreDNS: ${ms} ms\n`);
    expect(ms).toBeLessThan(1000);
    await w.setLoadBalancerAddress('cluster-a', addresses.kuard);
    await expectAnswer(coreDnsB, KUARD_NAME, [addresses.kuard]);
  });

  it('answers the cluster-independent name from both clusters', async () => {
    await expectAnswer(coreDnsA, ANY_CLUSTER_NAME, [addresses.kuard]);
    await expectAnswer(coreDnsB, ANY_CLUSTER_NAME, [addresses.kuard]);
  });

  it("keeps resolving from cluster-b while cluster-a's API server is down", async () => {
    const info = w.env?.info;
    if (!info) throw new Error('no test environment');
    await stopCluster(info, 'cluster-a');
    try {
      await new Promise((r) => setTimeout(r, 2000));
      await expectAnswer(coreDnsB, KUARD_NAME, [addresses.kuard]);
      await expectAnswer(coreDnsA, KUARD_NAME, [addresses.kuard]);
      const body = await w.workload('cluster-b').pod.curl(`http://${KUARD_NAME}`);
      expect(body).toContain('cluster-a');
    } finally {
      await startCluster(info, 'cluster-a');
    }
    // Back when it serves reads again (a restarted API server answers 429 while its storage initialises).
    const api = w.workload('cluster-a').kc.makeApiClient(CoreV1Api);
    await eventually(() => api.listNamespace(), 30_000, 200);
    await expectAnswer(coreDnsB, KUARD_NAME, [addresses.kuard], 30_000);
  });

  it('restarts the operator without changing any record set or Corefile', async () => {
    const versions = async () => {
      const out: Record<string, string> = {};
      for (const cluster of ['cluster-a', 'cluster-b']) {
        const kc = w.workload(cluster).kc;
        const sets = (await kc.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
          group: 'connectivity.tanzu.vmware.com',
          version: 'v1alpha1',
          namespace: 'capi-dns',
          plural: 'dnsrecordsets',
        })) as { items: { metadata: { name: string; resourceVersion: string } }[] };
        for (const s of sets.items) out[`${cluster}/${s.metadata.name}`] = s.metadata.resourceVersion;
        const cm = await kc
          .makeApiClient(CoreV1Api)
          .readNamespacedConfigMap({ name: 'coredns', namespace: 'kube-system' });
        out[`${cluster}/coredns`] = cm.metadata?.resourceVersion ?? '';
      }
      return out;
    };
    // Custom resources come back a little after the rest of a restarted API server.
    const before = await eventually(versions, 30_000, 200);
    expect(Object.keys(before).length).toBeGreaterThanOrEqual(4);
    await w.restartOperator();
    // The new leader has reconciled the GatewayDNS (the counter counts reconciles started) ...
    await eventually(
      async () => {
        const reconciles = sumMetric(
          await metricsAt(addresses.operatorHealth),
          'controller_runtime_reconcile_total',
          { controller: 'gatewaydns' },
        );
        if (reconciles < 1) throw new Error('the restarted operator has reconciled no GatewayDNS yet');
      },
      30_000,
      100,
    );
    // ... and its Corefile controller, started right after, has had a moment for both clusters.
    await new Promise((r) => setTimeout(r, 1000));
    expect(await eventually(versions, 30_000, 200)).toEqual(before);
  });

  it('restores the Corefile patch after it is removed by hand', async () => {
    const kubectl = w.workload('cluster-b').kubectl;
    const api = w.workload('cluster-b').kc.makeApiClient(CoreV1Api);
    const cm = await api.readNamespacedConfigMap({ name: 'coredns', namespace: 'kube-system' });
    const patched = cm.data?.Corefile ?? '';
    const original = patched.replace(/\n?# capi-dns[\s\S]*$/, '\n');
    expect(original).not.toEqual(patched);
    await kubectl.run([
      '-n',
      'kube-system',
      'patch',
      'configmap',
      'coredns',
      '--type=merge',
      '-p',
      JSON.stringify({ data: { Corefile: original } }),
    ]);
    await eventually(
      async () => {
        const now = await api.readNamespacedConfigMap({ name: 'coredns', namespace: 'kube-system' });
        if (!now.data?.Corefile?.includes('xcc.test')) throw new Error('Corefile not restored yet');
      },
      15_000,
      100,
    );
    await expectAnswer(coreDnsB, KUARD_NAME, [addresses.kuard], 15_000);
  });

  it('gives NXDOMAIN after the label is removed, and after the GatewayDNS is deleted', async () => {
    const management = w.managementKubectl();
    await management.run(['-n', NAMESPACE, 'label', 'cluster', 'cluster-a', 'hasContour-']);
    await expectNxdomain(coreDnsB, KUARD_NAME);
    await management.run(['-n', NAMESPACE, 'label', 'cluster', 'cluster-a', 'hasContour=true']);
    await expectAnswer(coreDnsB, KUARD_NAME, [addresses.kuard]);
    await management.run(['-n', NAMESPACE, 'delete', 'gatewaydns', 'dev-team-gateway-dns', '--wait=true']);
    await expectNxdomain(coreDnsB, KUARD_NAME);
    await expectNxdomain(coreDnsA, ANY_CLUSTER_NAME);
  });
});
