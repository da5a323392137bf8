// Drift: a record set the operator owns, changed or deleted by hand in a
// workload cluster, is put back by the operator on its own (the watch on the
// record sets enqueues the GatewayDNS; nothing waits for a resync).
import {
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { registerWorkloadCluster } from '../support/capi.js';
import { testEnvInfo } from '../support/environment.js';
import { apply } from '../support/kube.js';
import { clusterOf, kubeConfigOf } from '../support/testenv.js';
import {
  deleteGatewayDns,
  ensureRecordsNamespace,
  setLoadBalancer,
  startOperator,
  waitForRecords,
  type OperatorProcess,
} from '../support/operator.js';

const info = testEnvInfo();
const NS = 'op-drift';
const SET = `${NS}.gw`;
const management = kubeConfigOf(info, 'management');
const clusterA = kubeConfigOf(info, 'cluster-a');
const WANT = [
  `*.gateway.cluster-a.${NS}.clusters.xcc.test A 192.0.2.10`,
  `*.gateway.${NS}.clusters.xcc.test A 192.0.2.10`,
];
const recordSets = () => clusterA.makeApiClient(CustomObjectsApi);
const target = {
  group: 'connectivity.tanzu.vmware.com',
  version: 'v1alpha1',
  namespace: 'capi-dns',
  plural: 'dnsrecordsets',
  // The set of cluster-a's share: one record set per source cluster.
  name: `${SET}.cluster-a`,
};

describe('operator: drift in a workload cluster', () => {
  let op: OperatorProcess | undefined;

  beforeAll(async () => {
    await registerWorkloadCluster(management, {
      namespace: NS,
      cluster: 'cluster-a',
      kubeconfigPath: clusterOf(info, 'cluster-a').kubeconfig,
    });
    await ensureRecordsNamespace(clusterA);
    await setLoadBalancer(clusterA, 'op-drift-gw', 'envoy', [{ ip: '192.0.2.10' }]);
    op = await startOperator(clusterOf(info, 'management').kubeconfig, [
      '--namespace',
      NS,
      '--no-leader-elect',
      '--no-manage-corefiles',
    ]);
    await apply(management, [
      {
        apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
        kind: 'GatewayDNS',
        metadata: { name: 'gw', namespace: NS },
        spec: { clusterSelector: {}, service: 'op-drift-gw/envoy' },
      } as KubernetesObject,
    ]);
    await waitForRecords(clusterA, SET, WANT);
  }, 60_000);

  afterAll(async () => {
    await deleteGatewayDns(management, NS, 'gw').catch(() => undefined);
    await op?.stop();
  }, 30_000);

  it('puts back a record set deleted by hand', async () => {
    await recordSets().deleteNamespacedCustomObject(target);
    await waitForRecords(clusterA, SET, WANT, 5_000);
  });

  it('puts back a record set edited by hand', async () => {
    await recordSets().patchNamespacedCustomObject(
      {
        ...target,
        body: {
          spec: { records: [{ name: `x.${NS}.clusters.xcc.test`, type: 'A', values: ['192.0.2.99'] }] },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await waitForRecords(clusterA, SET, WANT, 5_000);
  });
});
