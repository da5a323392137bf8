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
import { CLUSTER_API, registerWorkloadCluster, writeKubeconfigSecret } from '../support/capi.js';
import { testEnvInfo } from '../support/environment.js';
import { apply, eventually, statusCode } from '../support/kube.js';
import { clusterOf, kubeConfigOf } from '../support/testenv.js';
import {
  deleteGatewayDns,
  ensureRecordsNamespace,
  listRecordSets,
  metricsOf,
  readGatewayDns,
  isSetOf,
  readRecordSet,
  setLoadBalancer,
  startOperator,
  waitForReady,
  waitForRecords,
  type OperatorProcess,
} from '../support/operator.js';
import { sumMetric } from '../support/metrics.js';

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
      ...CLUSTER_API,
      namespace: NS,
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
    // One set per source cluster: only cluster-a has addresses so far.
    const sets = (await listRecordSets(clusterB)).filter((s) => isSetOf(s, SET));
    expect(sets.map((s) => [s.metadata.name, s.metadata.labels])).toEqual([
      [
        `${SET}.cluster-a`,
        {
          'app.kubernetes.io/managed-by': 'capi-dns-controller',
          'connectivity.tanzu.vmware.com/gatewaydns-namespace': NS,
          'connectivity.tanzu.vmware.com/gatewaydns-name': GW_NAME,
          'connectivity.tanzu.vmware.com/source-cluster': 'cluster-a',
        },
      ],
    ]);
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
    // prom-client's default process and Node collectors, next to ours.
    expect(m['process_resident_memory_bytes']).toBeGreaterThan(0);
    expect(m['nodejs_eventloop_lag_seconds']).toBeGreaterThanOrEqual(0);
    expect(m['process_cpu_seconds_total']).toBeGreaterThan(0);
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
    try {
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
    } finally {
      // Also when the test fails: the tests after this one need a working kubeconfig.
      await writeKubeconfigSecret(management, { namespace: NS, cluster: 'cluster-a' }, text);
    }
    await setLoadBalancer(clusterA, SVC_NS, 'envoy', [{ ip: '127.0.10.3' }]);
    await bothHave([`${A} A 127.0.10.3`, `${B} CNAME lb-b.example.com`, `${ANY} A 127.0.10.3`]);
    await waitForReady(management, NS, GW_NAME, 'Ready');
  });

  it('publishes node addresses and SRV records for nodePort', async () => {
    const coreA = clusterA.makeApiClient(CoreV1Api);
    const coreB = clusterB.makeApiClient(CoreV1Api);
    // Each workload cluster is an API server of its own, without kubelets: these are its only Nodes.
    const nodes = [
      [coreA, 'op-walk-node-1', '127.0.11.1', 'True'],
      [coreA, 'op-walk-node-2', '127.0.11.2', 'True'],
      [coreA, 'op-walk-node-3', '127.0.11.3', 'False'],
      [coreB, 'op-walk-node-b1', '127.0.11.4', 'True'],
    ] as const;
    try {
      for (const [core, name, ip, ready] of nodes) {
        try {
          await core.createNode({ body: { metadata: { name, labels: { 'op-walk': 'true' } } } });
        } catch (err) {
          // Left over from an earlier run: its status is set again below.
          if (statusCode(err) !== 409) throw err;
        }
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
      const nodePort = async (core: CoreV1Api) =>
        (await core.readNamespacedService({ name: 'envoy', namespace: SVC_NS })).spec?.ports?.[0]?.nodePort;
      const portA = await nodePort(coreA);
      const portB = await nodePort(coreB);
      expect(portA).toBeDefined();
      expect(portB).toBeDefined();
      const baseA = `np.cluster-a.${NS}.clusters.xcc.test`;
      const baseB = `np.cluster-b.${NS}.clusters.xcc.test`;
      const any = `np.${NS}.clusters.xcc.test`;
      // Only Ready nodes; the cluster-independent names gather both clusters.
      const want = [
        `*.${baseA} A 127.0.11.1,127.0.11.2`,
        `${baseA} A 127.0.11.1,127.0.11.2`,
        `_https._tcp.${baseA} SRV 0 0 ${portA} ${baseA}.`,
        `*.${baseB} A 127.0.11.4`,
        `${baseB} A 127.0.11.4`,
        `_https._tcp.${baseB} SRV 0 0 ${portB} ${baseB}.`,
        `*.${any} A 127.0.11.1,127.0.11.2,127.0.11.4`,
        `_https._tcp.${any} SRV ${[`0 0 ${portA} ${baseA}.`, `0 0 ${portB} ${baseB}.`].sort().join(',')}`,
      ];
      await waitForRecords(clusterA, `${NS}.node-ports`, want);
      await waitForRecords(clusterB, `${NS}.node-ports`, want);
    } finally {
      await deleteGatewayDns(management, NS, 'node-ports').catch((err: unknown) => {
        if (statusCode(err) !== 404) throw err;
      });
      for (const [core, name] of nodes)
        await core.deleteNode({ name }).catch((err: unknown) => {
          if (statusCode(err) !== 404) throw err;
        });
    }
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
    // Every GatewayDNS of the namespace has been taken up by the new operator before comparing.
    const gatewayDnsCount = (
      (await management.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
        group: 'connectivity.tanzu.vmware.com',
        version: 'v1alpha1',
        namespace: NS,
        plural: 'gatewaydns',
      })) as { items: unknown[] }
    ).items.length;
    expect(gatewayDnsCount).toBeGreaterThan(0);
    await eventually(async () => {
      const reconciles = sumMetric(await metricsOf(op), 'controller_runtime_reconcile_total', {
        controller: 'gatewaydns',
      });
      if (reconciles < gatewayDnsCount)
        throw new Error(`${reconciles} reconciles so far, want at least ${gatewayDnsCount}`);
    });
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
