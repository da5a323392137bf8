// A restart that writes nothing and never answers wrong (issue 18, item 4), on
// the real API servers of the shared test environment: two GatewayDNS, the
// newer one's Service annotated with a host name the older one already holds
// through its own Service's annotation. Before, a restarted operator wrote the
// newer one's record sets twice about 60 ms apart, and for 30–60 ms the
// older one's name answered with the newer one's addresses merged in: the
// newer one was reconciled before the older one's annotation was read again.
import { CoreV1Api, PatchStrategy, setHeaderOptions, type KubernetesObject } from '@kubernetes/client-node';
import { registerWorkloadCluster } from '../support/capi.js';
import { dig, startDnsServer, type DnsProcess } from '../support/dns.js';
import { testEnvInfo } from '../support/environment.js';
import { apply, eventually } from '../support/kube.js';
import { clusterOf, kubeConfigOf } from '../support/testenv.js';
import {
  deleteGatewayDns,
  ensureRecordsNamespace,
  metricsOf,
  setLoadBalancer,
  startOperator,
  waitForReady,
  type OperatorProcess,
} from '../support/operator.js';
import { sumMetric } from '../support/metrics.js';

const info = testEnvInfo();
const NS = 'op-restart';
const SVC_NS = 'op-restart-apps';
const NAME = 'api-restart.xcc.test';
const management = kubeConfigOf(info, 'management');
const clusterA = kubeConfigOf(info, 'cluster-a');

const gatewayDns = (name: string, service: string) =>
  ({
    apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
    kind: 'GatewayDNS',
    metadata: { name, namespace: NS },
    spec: {
      clusterSelector: { matchLabels: { restart: 'test' } },
      service: `${SVC_NS}/${service}`,
      gatewayLabel: name,
    },
  }) as KubernetesObject;

async function annotate(service: string, fqdn: string): Promise<void> {
  await clusterA.makeApiClient(CoreV1Api).patchNamespacedService(
    {
      name: service,
      namespace: SVC_NS,
      body: { metadata: { annotations: { 'connectivity.tanzu.vmware.com/fqdn': fqdn } } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

describe('operator restart with contested annotated host names', () => {
  const started = (): Promise<OperatorProcess> =>
    startOperator(clusterOf(info, 'management').kubeconfig, [
      '--namespace',
      NS,
      '--no-leader-elect',
      '--no-manage-corefiles',
    ]);
  let op: OperatorProcess | undefined;
  let dns: DnsProcess | undefined;
  const answer = async () => (await dig(dns!.port, ['+short', NAME, 'A'])).stdout.trim();

  beforeAll(async () => {
    await registerWorkloadCluster(management, {
      namespace: NS,
      cluster: 'cluster-a',
      kubeconfigPath: clusterOf(info, 'cluster-a').kubeconfig,
      labels: { restart: 'test' },
    });
    await ensureRecordsNamespace(clusterA);
    await setLoadBalancer(clusterA, SVC_NS, 'older', [{ ip: '192.0.2.71' }]);
    await setLoadBalancer(clusterA, SVC_NS, 'newer', [{ ip: '192.0.2.72' }]);
    await annotate('older', NAME);
    await annotate('newer', NAME);
    dns = await startDnsServer([
      '--zone',
      'xcc.test',
      '--kubeconfig',
      clusterOf(info, 'cluster-a').kubeconfig,
    ]);
    op = await started();
    await apply(management, [gatewayDns('older', 'older')]);
    await waitForReady(management, NS, 'older', 'Ready');
    // A second apart: creationTimestamp has seconds, and the older one must be older.
    await new Promise((r) => setTimeout(r, 1100));
    await apply(management, [gatewayDns('newer', 'newer')]);
    const newer = await waitForReady(management, NS, 'newer', 'Conflict');
    expect(newer.status?.conditions?.find((c) => c.type === 'HostnamesAccepted')).toMatchObject({
      status: 'False',
      reason: 'Conflict',
    });
    await eventually(async () => expect(await answer()).toBe('192.0.2.71'), 10_000);
  });

  afterAll(async () => {
    await deleteGatewayDns(management, NS, 'newer').catch(() => undefined);
    await deleteGatewayDns(management, NS, 'older').catch(() => undefined);
    await op?.stop();
    await dns?.stop();
  });

  it('writes nothing into a workload cluster, and the held name never answers with the newer addresses', async () => {
    await op!.stop();
    let asking = true;
    const wrong: string[] = [];
    let asked = 0;
    const watcher = (async () => {
      while (asking) {
        const got = await answer();
        asked++;
        if (got !== '192.0.2.71') wrong.push(got || '(no answer)');
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    op = await started();
    // Both reconciled (the held one once the older one's claims are read) and then some.
    await eventually(async () =>
      expect(
        sumMetric(await metricsOf(op!), 'controller_runtime_reconcile_total', { controller: 'gatewaydns' }),
      ).toBeGreaterThanOrEqual(2),
    );
    await new Promise((r) => setTimeout(r, 2000));
    asking = false;
    await watcher;
    const metrics = await metricsOf(op!);
    process.stderr.write(
      `restart: ${sumMetric(metrics, 'controller_runtime_reconcile_total', { controller: 'gatewaydns' })} reconciles, ${metrics['capi_dns_workload_writes_total']} workload writes, ${asked} answers, ${wrong.length} wrong\n`,
    );
    expect(wrong).toEqual([]);
    expect(metrics['capi_dns_recordsets_written_total']).toBe(0);
    expect(metrics['capi_dns_workload_writes_total']).toBe(0);
    await waitForReady(management, NS, 'older', 'Ready');
    await waitForReady(management, NS, 'newer', 'Conflict');
  });
});
