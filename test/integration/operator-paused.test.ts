// The Cluster API contract on paused and deleting Clusters, on the real API
// servers and the real Cluster API controllers of the shared test environment:
// a `clusterctl move`-shaped sequence
// (pause, delete, recreate paused, unpause) loses no answer, a change in a
// paused cluster is published only once it is unpaused, and a Cluster being
// deleted keeps its records until it is gone.
import {
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import {
  CLUSTER_API,
  deleteMovedCluster,
  markControlPlaneInitialized,
  registerWorkloadCluster,
} from '../support/capi.js';
import { dig, startDnsServer, type DnsProcess } from '../support/dns.js';
import { testEnvInfo } from '../support/environment.js';
import { apply, eventually } from '../support/kube.js';
import { clusterOf, kubeConfigOf } from '../support/testenv.js';
import {
  deleteGatewayDns,
  ensureRecordsNamespace,
  readGatewayDns,
  setLoadBalancer,
  startOperator,
  waitForReady,
  type OperatorProcess,
} from '../support/operator.js';

const info = testEnvInfo();
const NS = 'op-paused';
const CLUSTERS = ['cluster-a', 'cluster-b'] as const;
const management = kubeConfigOf(info, 'management');
const workload: Record<string, KubeConfig> = {
  'cluster-a': kubeConfigOf(info, 'cluster-a'),
  'cluster-b': kubeConfigOf(info, 'cluster-b'),
};
const NAME_A = `kuard.gateway.cluster-a.${NS}.clusters.xcc.test`;
const CLUSTERS_OF_NS = { ...CLUSTER_API, namespace: NS };

async function patchCluster(name: string, body: object): Promise<void> {
  await management
    .makeApiClient(CustomObjectsApi)
    .patchNamespacedCustomObject(
      { ...CLUSTERS_OF_NS, name, body },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
}

/** A GatewayDNS of cluster-a's envoy LoadBalancer over the Clusters labelled `<label>=test`. */
function envoyGatewayDns(name: string, label: string): KubernetesObject {
  return {
    apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
    kind: 'GatewayDNS',
    metadata: { name, namespace: NS },
    spec: {
      clusterSelector: { matchLabels: { [label]: 'test' } },
      service: 'projectcontour/envoy',
      resolutionType: 'loadBalancer',
    },
  } as KubernetesObject;
}

async function stateOf(cluster: string): Promise<string | undefined> {
  const gw = await readGatewayDns(management, NS, 'gw');
  return gw?.status?.clusters?.find((c) => c.cluster === cluster)?.state;
}

describe('paused and deleting Clusters', () => {
  let op: OperatorProcess;
  let dns: DnsProcess;
  const answer = async () => (await dig(dns.port, ['+short', NAME_A, 'A'])).stdout.trim();

  /** Asks cluster-b's dns-server every 50 ms until stopped; counts answers that are not `want()`. */
  function watchAnswers(want: () => string[]) {
    let stop = false;
    const wrong: string[] = [];
    let asked = 0;
    const done = (async () => {
      while (!stop) {
        const got = await answer();
        asked++;
        if (!want().includes(got)) wrong.push(got || '(no answer)');
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    return {
      stop: async () => {
        stop = true;
        await done;
        return { asked, wrong };
      },
    };
  }

  beforeAll(async () => {
    for (const cluster of CLUSTERS) {
      await registerWorkloadCluster(management, {
        namespace: NS,
        cluster,
        kubeconfigPath: clusterOf(info, cluster).kubeconfig,
        labels: { paused: 'test' },
      });
      await ensureRecordsNamespace(workload[cluster]!);
    }
    await setLoadBalancer(workload['cluster-a']!, 'projectcontour', 'envoy', [{ ip: '192.0.2.61' }]);
    op = await startOperator(clusterOf(info, 'management').kubeconfig, [
      '--namespace',
      NS,
      '--no-leader-elect',
      '--paused-departure-grace',
      '20s',
    ]);
    dns = await startDnsServer(
      ['--zone', 'xcc.test', '--kubeconfig', clusterOf(info, 'cluster-b').kubeconfig],
      {
        health: true,
      },
    );
    await apply(management, [envoyGatewayDns('gw', 'paused')]);
    await eventually(async () => expect(await answer()).toBe('192.0.2.61'), 15_000);
  });

  afterAll(async () => {
    await deleteGatewayDns(management, NS, 'gw').catch(() => undefined);
    await op?.stop();
    await dns?.stop();
  });

  it('a clusterctl move-shaped sequence loses no answer; a change while paused waits for unpause', async () => {
    const watch = watchAnswers(() => ['192.0.2.61']);
    await patchCluster('cluster-a', { spec: { paused: true } });
    await eventually(async () => expect(await stateOf('cluster-a')).toBe('Paused'), 10_000);
    // A change in the paused cluster: not read, so not published.
    await setLoadBalancer(workload['cluster-a']!, 'projectcontour', 'envoy', [{ ip: '192.0.2.62' }]);
    // clusterctl move: the source's paused objects lose their finalizers and are deleted, the
    // target's are created paused; Cluster API's controllers leave both alone until unpaused.
    await deleteMovedCluster(management, NS, 'cluster-a');
    await new Promise((r) => setTimeout(r, 2000));
    await registerWorkloadCluster(management, {
      namespace: NS,
      cluster: 'cluster-a',
      kubeconfigPath: clusterOf(info, 'cluster-a').kubeconfig,
      labels: { paused: 'test' },
      paused: true,
    });
    await new Promise((r) => setTimeout(r, 2000));
    const { asked, wrong } = await watch.stop();
    process.stderr.write(`paused, deleted, recreated paused: ${asked} answers, ${wrong.length} wrong\n`);
    expect(wrong).toEqual([]);
    expect(asked).toBeGreaterThan(20);
    // Unpaused: the change made while paused is published.
    await patchCluster('cluster-a', { spec: { paused: false } });
    await eventually(async () => expect(await answer()).toBe('192.0.2.62'), 15_000);
    await waitForReady(management, NS, 'gw', 'Ready');
  });

  it('a Cluster being deleted keeps its records until it is gone', async () => {
    await patchCluster('cluster-a', { metadata: { finalizers: ['test.capi-dns.io/hold'] } });
    await management
      .makeApiClient(CustomObjectsApi)
      .deleteNamespacedCustomObject({ ...CLUSTERS_OF_NS, name: 'cluster-a' });
    await eventually(async () => expect(await stateOf('cluster-a')).toBe('Deleting'), 10_000);
    const watch = watchAnswers(() => ['192.0.2.62']);
    await new Promise((r) => setTimeout(r, 1500));
    const { wrong } = await watch.stop();
    expect(wrong).toEqual([]);
    // Cluster API has deleted the provider objects and dropped its own finalizer by now; the last
    // finalizer goes: then, and only then, withdrawn.
    await patchCluster('cluster-a', { metadata: { finalizers: null } });
    await eventually(async () => expect(await answer()).toBe(''), 15_000);
  });

  it('a Cluster whose control plane is not initialized is reported as such, and not connected to until it is', async () => {
    const opts = {
      namespace: NS,
      cluster: 'cluster-new',
      kubeconfigPath: clusterOf(info, 'cluster-a').kubeconfig,
      labels: { provisioning: 'test' },
    };
    await registerWorkloadCluster(management, { ...opts, provisioning: true });
    await apply(management, [envoyGatewayDns('gw-new', 'provisioning')]);
    const entry = async () =>
      (await readGatewayDns(management, NS, 'gw-new'))?.status?.clusters?.find(
        (c) => c.cluster === 'cluster-new',
      );
    await eventually(async () => {
      const got = await entry();
      expect(got?.state).toBe('Provisioning');
      expect(got?.message).toMatch(/does not report the Cluster's infrastructure provisioned/);
    }, 10_000);
    // Provisioning is a phase, not a fault: the GatewayDNS is not failed for it.
    const ready = (await readGatewayDns(management, NS, 'gw-new'))?.status?.conditions?.find(
      (c) => c.type === 'Ready',
    );
    expect(ready?.reason).not.toBe('ClusterUnreachable');
    // Cluster API's own status says so too: the operator read it, not a connection attempt.
    expect(op.logs.some((l) => l.includes('cluster client built') && l.includes(`${NS}/cluster-new`))).toBe(
      false,
    );
    // The provider finishes: control plane initialized, kubeconfig written; Cluster API marks the Cluster.
    await markControlPlaneInitialized(management, opts);
    await eventually(async () => expect((await entry())?.addresses).toEqual(['192.0.2.62']), 20_000);
    await deleteGatewayDns(management, NS, 'gw-new');
  });
});
