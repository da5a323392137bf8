// capi-dns-controller against the real API servers of the shared test
// environment: the walkthrough's GatewayDNS, then what changes around it.
// Uses its own management namespace (and Service namespace in the workload
// clusters), and an operator restricted to that namespace.
import {
  CustomObjectsApi,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { registerWorkloadCluster, writeKubeconfigSecret } from '../support/capi.js';
import { testEnvInfo } from '../support/environment.js';
import { apply, eventually } from '../support/kube.js';
import { clusterOf, kubeConfigOf } from '../support/testenv.js';
import {
  deleteGatewayDns,
  ensureRecordsNamespace,
  listRecordSets,
  metricsOf,
  readGatewayDns,
  readRecordSet,
  setLoadBalancer,
  startOperator,
  waitForReady,
  waitForRecords,
  type OperatorProcess,
} from '../support/operator.js';

const info = testEnvInfo();
const NS = 'op-walk';
const SVC_NS = 'op-walk-contour';
const GW_NAME = 'dev-team-gateway-dns';
const SET = `${NS}.${GW_NAME}`;
const management = kubeConfigOf(info, 'management');
const clusterA = kubeConfigOf(info, 'cluster-a');
const clusterB = kubeConfigOf(info, 'cluster-b');
const A = `*.gateway.cluster-a.${NS}.clusters.xcc.test`;
const B = `*.gateway.cluster-b.${NS}.clusters.xcc.test`;
const ANY = `*.gateway.${NS}.clusters.xcc.test`;

function gatewayDns(name: string, spec: Record<string, unknown>) {
  return {
    apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
    kind: 'GatewayDNS',
    metadata: { name, namespace: NS },
    spec,
  };
}

const walkthrough = gatewayDns(GW_NAME, {
  clusterSelector: { matchLabels: { hasContour: 'true' } },
  service: `${SVC_NS}/envoy`,
  resolutionType: 'loadBalancer',
});

async function label(cluster: string, value: string | null): Promise<void> {
  await management.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject(
    {
      group: 'cluster.x-k8s.io',
      version: 'v1beta1',
      namespace: NS,
      plural: 'clusters',
      name: cluster,
      body: { metadata: { labels: { hasContour: value } } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

async function bothHave(want: string[]): Promise<void> {
  await Promise.all([waitForRecords(clusterA, SET, want), waitForRecords(clusterB, SET, want)]);
}

describe('capi-dns-controller on the shared environment', () => {
  let op: OperatorProcess;

  beforeAll(async () => {
    for (const cluster of ['cluster-a', 'cluster-b']) {
      await registerWorkloadCluster(management, {
        namespace: NS,
        cluster,
        kubeconfigPath: clusterOf(info, cluster).kubeconfig,
        labels: { hasContour: 'true' },
      });
      await ensureRecordsNamespace(kubeConfigOf(info, cluster));
    }
    await setLoadBalancer(clusterA, SVC_NS, 'envoy', [{ ip: '127.0.10.1' }]);
    op = await startOperator(clusterOf(info, 'management').kubeconfig, [
      '--namespace',
      NS,
      '--no-leader-elect',
    ]);
  });

  afterAll(async () => {
    await op?.stop();
  });

  it("writes the walkthrough's record sets into both workload clusters and reports Ready", async () => {
    await apply(management, [walkthrough]);
    await bothHave([`${A} A 127.0.10.1`, `${ANY} A 127.0.10.1`]);
    const set = await readRecordSet(clusterB, SET);
    expect(set?.metadata.labels).toMatchObject({
      'app.kubernetes.io/managed-by': 'capi-dns-controller',
      'connectivity.tanzu.vmware.com/gatewaydns-namespace': NS,
      'connectivity.tanzu.vmware.com/gatewaydns-name': GW_NAME,
    });
    const gw = await waitForReady(management, NS, GW_NAME, 'Ready');
    expect(gw.metadata.finalizers).toContain('connectivity.tanzu.vmware.com/gatewaydns');
    expect(gw.status?.selectedClusters).toBe(2);
    expect(gw.status?.clusters?.map((c) => [c.cluster, c.state, c.addresses])).toEqual([
      ['cluster-a', 'Ready', ['127.0.10.1']],
      ['cluster-b', 'ServiceNotFound', undefined],
    ]);
    const events = await management.makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: NS });
    expect(
      events.items.some((e) => e.reason === 'RecordSetWritten' && e.involvedObject.name === GW_NAME),
    ).toBe(true);
  });

  it('carries a LoadBalancer address change to every cluster, and IPv6 and host names too', async () => {
    await setLoadBalancer(clusterA, SVC_NS, 'envoy', [{ ip: '127.0.10.2' }]);
    await bothHave([`${A} A 127.0.10.2`, `${ANY} A 127.0.10.2`]);
    await setLoadBalancer(clusterB, SVC_NS, 'envoy', [{ ip: 'fd00::b' }]);
    await bothHave([`${A} A 127.0.10.2`, `${B} AAAA fd00::b`, `${ANY} A 127.0.10.2`, `${ANY} AAAA fd00::b`]);
    await setLoadBalancer(clusterB, SVC_NS, 'envoy', [{ hostname: 'lb-b.example.com' }]);
    await bothHave([`${A} A 127.0.10.2`, `${B} CNAME lb-b.example.com`, `${ANY} A 127.0.10.2`]);
    const m = await metricsOf(op);
    expect(m['capi_dns_propagation_latency_seconds_count']).toBeGreaterThan(0);
    expect(m['capi_dns_recordsets_written_total']).toBeGreaterThan(0);
  });

  it('withdraws a cluster whose label is removed, and brings it back', async () => {
    await label('cluster-a', null);
    await bothHave([`${B} CNAME lb-b.example.com`, `${ANY} CNAME lb-b.example.com`]);
    await label('cluster-a', 'true');
    await bothHave([`${A} A 127.0.10.2`, `${B} CNAME lb-b.example.com`, `${ANY} A 127.0.10.2`]);
  });

  it('rebuilds the client when the kubeconfig Secret rotates', async () => {
    const good = clusterOf(info, 'cluster-a').kubeconfig;
    const { readFileSync } = await import('node:fs');
    const text = readFileSync(good, 'utf8');
    // A kubeconfig pointing nowhere: the operator must drop its cached client and show the cluster unreachable.
    await writeKubeconfigSecret(
      management,
      { namespace: NS, cluster: 'cluster-a' },
      text.replace(/server: https:\/\/127\.0\.0\.1:\d+/, 'server: https://127.0.0.1:1'),
    );
    const gw = await waitForReady(management, NS, GW_NAME, 'ClusterUnreachable');
    const a = gw.status?.clusters?.find((c) => c.cluster === 'cluster-a');
    expect(a?.state).toBe('Unreachable');
    expect(a?.addresses).toEqual(['127.0.10.2']);
    // Last known addresses stay published in the reachable cluster.
    await waitForRecords(clusterB, SET, [
      `${A} A 127.0.10.2`,
      `${B} CNAME lb-b.example.com`,
      `${ANY} A 127.0.10.2`,
    ]);
    await writeKubeconfigSecret(management, { namespace: NS, cluster: 'cluster-a' }, text);
    await setLoadBalancer(clusterA, SVC_NS, 'envoy', [{ ip: '127.0.10.3' }]);
    await bothHave([`${A} A 127.0.10.3`, `${B} CNAME lb-b.example.com`, `${ANY} A 127.0.10.3`]);
    await waitForReady(management, NS, GW_NAME, 'Ready');
  });

  it('publishes node addresses and SRV records for nodePort', async () => {
    const core = clusterA.makeApiClient(CoreV1Api);
    for (const [name, ip, ready] of [
      ['op-walk-node-1', '127.0.11.1', 'True'],
      ['op-walk-node-2', '127.0.11.2', 'True'],
      ['op-walk-node-3', '127.0.11.3', 'False'],
    ] as const) {
      await core
        .createNode({ body: { metadata: { name, labels: { 'op-walk': 'true' } } } })
        .catch(() => undefined);
      await core.replaceNodeStatus({
        name,
        body: {
          metadata: { name },
          status: {
            addresses: [{ type: 'InternalIP', address: ip }],
            conditions: [
              {
                type: 'Ready',
                status: ready,
                reason: 'Test',
                message: '',
                lastHeartbeatTime: new Date(),
                lastTransitionTime: new Date(),
              },
            ],
          },
        },
      });
    }
    await apply(management, [
      gatewayDns('node-ports', {
        clusterSelector: { matchExpressions: [{ key: 'hasContour', operator: 'Exists' }] },
        service: `${SVC_NS}/envoy`,
        resolutionType: 'nodePort',
        gatewayLabel: 'np',
        nodeAddressTypes: ['InternalIP'],
      }),
    ]);
    const svc = await core.readNamespacedService({ name: 'envoy', namespace: SVC_NS });
    const port = svc.spec?.ports?.[0]?.nodePort;
    const base = `np.cluster-a.${NS}.clusters.xcc.test`;
    // Every workload cluster shares the node list here only if it is the same API server: cluster-b has none of these nodes.
    const want = [
      `*.${base} A 127.0.11.1,127.0.11.2`,
      `${base} A 127.0.11.1,127.0.11.2`,
      `_https._tcp.${base} SRV 0 0 ${port} ${base}.`,
      `*.np.${NS}.clusters.xcc.test A 127.0.11.1,127.0.11.2`,
      `_https._tcp.np.${NS}.clusters.xcc.test SRV 0 0 ${port} ${base}.`,
    ];
    const nodesB = await clusterB.makeApiClient(CoreV1Api).listNode();
    if (nodesB.items.length === 0) {
      await waitForRecords(clusterA, `${NS}.node-ports`, want);
      await waitForRecords(clusterB, `${NS}.node-ports`, want);
    }
    await deleteGatewayDns(management, NS, 'node-ports');
    for (const n of ['op-walk-node-1', 'op-walk-node-2', 'op-walk-node-3'])
      await core.deleteNode({ name: n });
  });

  it('reports a conflict on the newer GatewayDNS and lets neither overwrite the other', async () => {
    await apply(management, [gatewayDns('second', { clusterSelector: {}, service: `${SVC_NS}/other` })]);
    await setLoadBalancer(clusterA, SVC_NS, 'other', [{ ip: '127.0.12.1' }]);
    const gw = await waitForReady(management, NS, 'second', 'Conflict');
    expect(gw.status?.conditions?.[0]?.message).toContain(GW_NAME);
    await waitForRecords(clusterB, `${NS}.second`, []);
    await bothHave([`${A} A 127.0.10.3`, `${B} CNAME lb-b.example.com`, `${ANY} A 127.0.10.3`]);
    await deleteGatewayDns(management, NS, 'second');
    await eventually(async () => {
      if (await readRecordSet(clusterB, `${NS}.second`)) throw new Error('second still there');
    });
  });

  it('rewrites nothing after a restart', async () => {
    const versions = async (kc: KubeConfig) =>
      (await listRecordSets(kc))
        .filter((s) => s.metadata.name.startsWith(`${NS}.`))
        .map((s) => `${s.metadata.name}@${s.metadata.resourceVersion}`);
    const before = [await versions(clusterA), await versions(clusterB)];
    const gwBefore = await readGatewayDns(management, NS, GW_NAME);
    await op.stop();
    op = await startOperator(clusterOf(info, 'management').kubeconfig, [
      '--namespace',
      NS,
      '--no-leader-elect',
    ]);
    await eventually(async () => {
      const m = await metricsOf(op);
      if ((m['capi_dns_reconciles_total'] ?? 0) < 1) throw new Error('no reconcile yet');
    });
    await new Promise((r) => setTimeout(r, 1500));
    expect([await versions(clusterA), await versions(clusterB)]).toEqual(before);
    expect((await readGatewayDns(management, NS, GW_NAME))?.status).toEqual(gwBefore?.status);
    expect((await metricsOf(op))['capi_dns_recordsets_written_total']).toBe(0);
  });

  it('withdraws the record sets when the GatewayDNS is deleted', async () => {
    await deleteGatewayDns(management, NS, GW_NAME);
    await eventually(async () => {
      for (const kc of [clusterA, clusterB])
        if (await readRecordSet(kc, SET)) throw new Error('record set still there');
      if (await readGatewayDns(management, NS, GW_NAME)) throw new Error('GatewayDNS still there');
    });
  });
});
