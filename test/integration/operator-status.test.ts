// GatewayDNS status that never lies, on an environment of its own (it stops a
// workload API server): conditions start Unknown/Pending; a Service found
// nowhere is named before a name conflict and gets no record set; a stopped
// API server always ends in a status that says so, whichever watch notices
// first; a cluster that comes back is noticed within 2 s however long it was away.
import { CoreV1Api, type KubernetesObject } from '@kubernetes/client-node';
import { apply, eventually, recordEvents, statusCode } from '../support/kube.js';
import { TestEnv, startCluster, stopCluster } from '../support/testenv.js';
import {
  deleteGatewayDns,
  readGatewayDns,
  readRecordSet,
  setLoadBalancer,
  startOperator,
  waitForReady,
  waitForRecords,
  type GatewayDnsObject,
  type OperatorProcess,
  isSetOf,
  type RecordSetObject,
} from '../support/operator.js';
import { prepareClusters } from '../support/prepare.js';
import { registerWorkloadCluster } from '../support/capi.js';

const NS = 'dev-team';
const SET = `${NS}.gw`;
const A = `*.gateway.cluster-a.${NS}.clusters.xcc.test`;
const B = `*.gateway.cluster-b.${NS}.clusters.xcc.test`;
const ANY = `*.gateway.${NS}.clusters.xcc.test`;
const WORKLOADS = ['cluster-a', 'cluster-b'];
const RECORDSETS = '/apis/connectivity.tanzu.vmware.com/v1alpha1/namespaces/capi-dns/dnsrecordsets';

function gatewayDns(name: string, spec: Record<string, unknown>): KubernetesObject {
  return {
    apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
    kind: 'GatewayDNS',
    metadata: { name, namespace: NS },
    spec,
  } as KubernetesObject;
}

function readyOf(gw: GatewayDnsObject | undefined) {
  return gw?.status?.conditions?.find((c) => c.type === 'Ready');
}

function spread(ms: number[]): string {
  const sorted = [...ms].sort((a, b) => a - b);
  return `${sorted.join(', ')} ms (min ${sorted[0]}, max ${sorted[sorted.length - 1]})`;
}

describe('GatewayDNS status', () => {
  let env: TestEnv;
  let op: OperatorProcess | undefined;

  beforeAll(async () => {
    env = await TestEnv.start({ workloadClusters: [...WORKLOADS, 'bare'] });
    await prepareClusters(env, { namespace: NS, workloads: WORKLOADS, recordsNamespace: 'capi-dns' });
    // A workload cluster that runs no dns-server: none of our CRDs, no records namespace.
    await registerWorkloadCluster(env.kubeConfig('management'), {
      namespace: 'bare-team',
      cluster: 'bare',
      kubeconfigPath: env.cluster('bare').kubeconfig,
    });
    await setLoadBalancer(env.kubeConfig('cluster-a'), 'gw', 'envoy', [{ ip: '127.0.40.1' }]);
    await setLoadBalancer(env.kubeConfig('cluster-b'), 'gw', 'envoy', [{ ip: '127.0.40.2' }]);
    op = await startOperator(env.cluster('management').kubeconfig, ['--no-leader-elect']);
  }, 120_000);

  afterAll(async () => {
    await op?.stop();
    await env?.stop();
  }, 60_000);

  it('starts Unknown/Pending and becomes Ready once the first reconcile is done', async () => {
    const management = env.kubeConfig('management');
    const watch = await recordEvents<GatewayDnsObject>(
      management,
      `/apis/connectivity.tanzu.vmware.com/v1alpha1/namespaces/${NS}/gatewaydns`,
    );
    const readySeen = () =>
      watch.events
        .filter((e) => e.object.metadata.name === 'gw')
        .map((e) => readyOf(e.object))
        .filter((c) => c !== undefined);
    let gw: GatewayDnsObject;
    try {
      await apply(management, [gatewayDns('gw', { clusterSelector: {}, service: 'gw/envoy' })]);
      gw = await waitForReady(management, NS, 'gw', 'Ready');
      // The watch may deliver the last write a moment after a read shows it.
      await eventually(async () => {
        if (readySeen().at(-1)?.status !== 'True') throw new Error('the watch has not seen Ready=True yet');
      });
    } finally {
      watch.stop();
    }
    const seen = readySeen();
    expect(seen[0]).toMatchObject({ status: 'Unknown', reason: 'Pending' });
    // Unknown → True is a transition: it has its own time, not Pending's.
    const pendingAt = Date.parse(seen[0]?.lastTransitionTime ?? '');
    const readyAt = Date.parse(readyOf(gw)?.lastTransitionTime ?? '');
    expect(readyAt).toBeGreaterThanOrEqual(pendingAt);
    await waitForRecords(env.kubeConfig('cluster-b'), SET, [
      `${A} A 127.0.40.1`,
      `${B} A 127.0.40.2`,
      `${ANY} A 127.0.40.1,127.0.40.2`,
    ]);
  });

  it('names a Service found nowhere before a conflict, and writes no record set for it', async () => {
    const management = env.kubeConfig('management');
    const watches = await Promise.all(
      WORKLOADS.map((c) => recordEvents<RecordSetObject>(env.kubeConfig(c), RECORDSETS)),
    );
    try {
      // Same names as the older "gw" (a conflict it loses), and a Service that exists in no cluster.
      await apply(management, [gatewayDns('missing', { clusterSelector: {}, service: 'gw/absent' })]);
      const gw = await waitForReady(management, NS, 'missing', 'ServiceNotFound');
      expect(readyOf(gw)?.status).toBe('False');
      expect(gw.status?.clusters?.map((c) => c.state)).toEqual(['ServiceNotFound', 'ServiceNotFound']);
      for (const c of WORKLOADS)
        expect(await readRecordSet(env.kubeConfig(c), `${NS}.missing`)).toBeUndefined();
    } finally {
      watches.forEach((w) => w.stop());
      await deleteGatewayDns(management, NS, 'missing');
    }
    const written = watches.flatMap((w) => w.events).filter((e) => isSetOf(e.object, `${NS}.missing`));
    expect(written).toEqual([]);
  });

  it('withdraws a record set that no longer serves anything', async () => {
    const management = env.kubeConfig('management');
    const a = env.kubeConfig('cluster-a');
    const solo = `${NS}.solo`;
    await setLoadBalancer(a, 'gw', 'solo', [{ ip: '127.0.40.9' }]);
    await apply(management, [
      gatewayDns('solo', { clusterSelector: {}, service: 'gw/solo', gatewayLabel: 'solo' }),
    ]);
    try {
      const want = [
        `*.solo.cluster-a.${NS}.clusters.xcc.test A 127.0.40.9`,
        `*.solo.${NS}.clusters.xcc.test A 127.0.40.9`,
      ];
      await Promise.all(WORKLOADS.map((c) => waitForRecords(env.kubeConfig(c), solo, want)));
      await a.makeApiClient(CoreV1Api).deleteNamespacedService({ namespace: 'gw', name: 'solo' });
      await waitForReady(management, NS, 'solo', 'ServiceNotFound');
      await Promise.all(
        WORKLOADS.map((c) =>
          eventually(async () => {
            if (await readRecordSet(env.kubeConfig(c), solo)) throw new Error(`${solo} still in ${c}`);
          }),
        ),
      );
    } finally {
      await deleteGatewayDns(management, NS, 'solo').catch((err: unknown) => {
        if (statusCode(err) !== 404) throw err;
      });
    }
  });

  it('takes a cluster without a dns-server for what it is, not for unreachable', async () => {
    const management = env.kubeConfig('management');
    await setLoadBalancer(env.kubeConfig('bare'), 'gw', 'envoy', [{ ip: '127.0.40.7' }]);
    await apply(management, [
      {
        ...gatewayDns('gw', { clusterSelector: {}, service: 'gw/envoy' }),
        metadata: { name: 'gw', namespace: 'bare-team' },
      },
    ]);
    const gw = await waitForReady(management, 'bare-team', 'gw', 'Ready');
    expect(gw.status?.clusters).toMatchObject([
      { cluster: 'bare', state: 'Ready', addresses: ['127.0.40.7'] },
    ]);
    expect(readyOf(gw)?.message).toContain('published to 0 workload cluster(s)');
    expect(
      op?.logs.filter((l) => l.includes('"cluster unreachable"') && l.includes('bare-team/bare')),
    ).toEqual([]);
  });

  it('always shows a stopped workload API server in status, whichever watch notices first', async () => {
    const management = env.kubeConfig('management');
    const took: number[] = [];
    const afterStop: number[] = [];
    // Each try is a race between the cluster's watches; three tries make a lucky pass unlikely.
    for (let i = 0; i < 3; i++) {
      await waitForReady(management, NS, 'gw', 'Ready', 30_000);
      const stoppedAt = Date.now();
      await stopCluster(env.info, 'cluster-b');
      const stopReturnedAt = Date.now();
      try {
        const gw = await eventually(
          async () => {
            const got = await readGatewayDns(management, NS, 'gw');
            const b = got?.status?.clusters?.find((c) => c.cluster === 'cluster-b');
            const ready = readyOf(got);
            if (ready?.status === 'True' || b?.state !== 'Unreachable')
              throw new Error(`try ${i + 1}: Ready ${ready?.status}/${ready?.reason}, cluster-b ${b?.state}`);
            return got!;
          },
          10_000,
          20,
        );
        took.push(Date.now() - stoppedAt);
        afterStop.push(Date.now() - stopReturnedAt);
        expect(readyOf(gw)).toMatchObject({ status: 'False', reason: 'ClusterUnreachable' });
        expect(gw.status?.clusters?.find((c) => c.cluster === 'cluster-b')).toMatchObject({
          addresses: ['127.0.40.2'],
        });
      } finally {
        await startCluster(env.info, 'cluster-b');
      }
    }
    process.stderr.write(
      `API server stop requested → status ClusterUnreachable: ${spread(took)}; after the stop returned: ${spread(afterStop)}\n`,
    );
    await waitForReady(management, NS, 'gw', 'Ready', 30_000);
  }, 180_000);

  it('notices a cluster that comes back within 2 s, however long its watches backed off', async () => {
    const management = env.kubeConfig('management');
    const b = env.kubeConfig('cluster-b');
    await stopCluster(env.info, 'cluster-b');
    let startedAt = 0;
    try {
      await waitForReady(management, NS, 'gw', 'ClusterUnreachable', 15_000);
      // Long enough for every watch of cluster-b to reach its longest backoff.
      await new Promise((r) => setTimeout(r, 25_000));
    } finally {
      await startCluster(env.info, 'cluster-b');
      startedAt = Date.now();
    }
    await setLoadBalancer(b, 'gw', 'envoy', [{ ip: '127.0.40.3' }]);
    await waitForRecords(
      b,
      SET,
      [`${A} A 127.0.40.1`, `${B} A 127.0.40.3`, `${ANY} A 127.0.40.1,127.0.40.3`],
      10_000,
    );
    const ms = Date.now() - startedAt;
    process.stderr.write(`API server started → change in cluster-b's record set: ${ms} ms\n`);
    expect(ms).toBeLessThan(2_000);
    await waitForReady(management, NS, 'gw', 'Ready', 10_000);
  }, 90_000);
});
