// Faults, on an environment of its own (it stops API servers): a stopped
// workload API server, an invalid object stored under an older, looser CRD,
// and two operator replicas of which the leader is killed.
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { apply, eventually } from '../support/kube.js';
import { writeEndpointSlice } from '../support/endpointslices.js';
import { TestEnv, startCluster, stopCluster } from '../support/testenv.js';
import {
  deleteGatewayDns,
  metricsOf,
  readRecordSet,
  recordLines,
  setLoadBalancer,
  startOperator,
  waitForReady,
  waitForRecords,
  type OperatorProcess,
} from '../support/operator.js';
import { prepareClusters } from '../support/prepare.js';
import { sumMetric } from '../support/metrics.js';

const NS = 'dev-team';
const SET = `${NS}.gw`;
const A = `*.gateway.cluster-a.${NS}.clusters.xcc.test`;
const B = `*.gateway.cluster-b.${NS}.clusters.xcc.test`;
const ANY = `*.gateway.${NS}.clusters.xcc.test`;

/** The GatewayDNS CRD as an older release might have had it: spec unvalidated. */
function olderGatewayDnsCrd(crd: KubernetesObject): KubernetesObject {
  const copy = JSON.parse(JSON.stringify(crd)) as {
    spec: { versions: { schema: { openAPIV3Schema: { properties: Record<string, unknown> } } }[] };
  };
  copy.spec.versions[0]!.schema.openAPIV3Schema.properties.spec = {
    type: 'object',
    // client-node's serializer knows the extension by its model name; the YAML spelling would be dropped.
    x_kubernetes_preserve_unknown_fields: true,
  };
  return copy as unknown as KubernetesObject;
}

function gatewayDns(name: string, spec: Record<string, unknown>): KubernetesObject {
  return {
    apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
    kind: 'GatewayDNS',
    metadata: { name, namespace: NS },
    spec,
  } as KubernetesObject;
}

/** A headless Service `db` with one ready pod db-0, as its StatefulSet and the EndpointSlice controller would leave it. */
async function writeHeadlessDb(kc: KubeConfig, namespace: string, address: string): Promise<void> {
  await apply(kc, [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'db', namespace },
      spec: { clusterIP: 'None', ports: [{ name: 'db', port: 5432 }], selector: { app: 'db' } },
    } as KubernetesObject,
  ]);
  await writeEndpointSlice(kc, {
    namespace,
    service: 'db',
    name: 'db-abcde',
    addressType: 'IPv4',
    endpoints: [{ pod: 'db-0', address, hostname: 'db-0' }],
    ports: [{ name: 'db', port: 5432 }],
  });
}

describe('capi-dns-controller under faults', () => {
  let env: TestEnv;
  const ops: OperatorProcess[] = [];

  beforeAll(async () => {
    env = await TestEnv.start({ workloadClusters: ['cluster-a', 'cluster-b'] });
    await prepareClusters(env, {
      namespace: NS,
      workloads: ['cluster-a', 'cluster-b'],
      managementCrds: (crds) =>
        crds.map((c) => (c.metadata?.name?.startsWith('gatewaydns.') ? olderGatewayDnsCrd(c) : c)),
      recordsNamespace: 'capi-dns',
    });
    const management = env.kubeConfig('management');
    await setLoadBalancer(env.kubeConfig('cluster-a'), 'gw', 'envoy', [{ ip: '127.0.30.1' }]);
    await setLoadBalancer(env.kubeConfig('cluster-b'), 'gw', 'envoy', [{ ip: '127.0.30.2' }]);
    for (const id of ['replica-1', 'replica-2'])
      ops.push(await startOperator(env.cluster('management').kubeconfig, ['--identity', id]));
    await apply(management, [gatewayDns('gw', { clusterSelector: {}, service: 'gw/envoy' })]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(ops.map((o) => o.stop()));
    await env?.stop();
  }, 60_000);

  async function both(want: string[], timeoutMs = 10_000): Promise<void> {
    await Promise.all(
      ['cluster-a', 'cluster-b'].map((c) => waitForRecords(env.kubeConfig(c), SET, want, timeoutMs)),
    );
  }

  async function leader(): Promise<OperatorProcess> {
    for (const op of ops) {
      if (op.child.exitCode !== null || op.child.signalCode !== null) continue;
      if (sumMetric(await metricsOf(op), 'leader_election_master_status') === 1) return op;
    }
    throw new Error('no leader');
  }

  it('has one active replica, which writes the record sets', async () => {
    await both([`${A} A 127.0.30.1`, `${B} A 127.0.30.2`, `${ANY} A 127.0.30.1,127.0.30.2`]);
    const flags = await Promise.all(
      ops.map(async (o) => sumMetric(await metricsOf(o), 'leader_election_master_status')),
    );
    expect(flags.sort()).toEqual([0, 1]);
  });

  it('keeps the records of a stopped workload cluster, shows it in status, and catches up after', async () => {
    const management = env.kubeConfig('management');
    await stopCluster(env.info, 'cluster-b');
    try {
      await setLoadBalancer(env.kubeConfig('cluster-a'), 'gw', 'envoy', [{ ip: '127.0.30.3' }]);
      // cluster-a gets the change; cluster-b's last known address stays published.
      await waitForRecords(env.kubeConfig('cluster-a'), SET, [
        `${A} A 127.0.30.3`,
        `${B} A 127.0.30.2`,
        `${ANY} A 127.0.30.2,127.0.30.3`,
      ]);
      const gw = await waitForReady(management, NS, 'gw', 'ClusterUnreachable', 15_000);
      const b = gw.status?.clusters?.find((c) => c.cluster === 'cluster-b');
      expect(b).toMatchObject({ state: 'Unreachable', addresses: ['127.0.30.2'] });
      expect(b?.lastError).toBeTruthy();
    } finally {
      await startCluster(env.info, 'cluster-b');
    }
    await both([`${A} A 127.0.30.3`, `${B} A 127.0.30.2`, `${ANY} A 127.0.30.2,127.0.30.3`], 30_000);
    await waitForReady(management, NS, 'gw', 'Ready', 30_000);
  });

  it('marks an invalid object from an older CRD Invalid and goes on with the others', async () => {
    const management = env.kubeConfig('management');
    await apply(management, [
      gatewayDns('broken', {
        clusterSelector: { matchLabels: 'x' },
        service: 'no-slash',
        resolutionType: 'magic',
      }),
    ]);
    const gw = await waitForReady(management, NS, 'broken', 'Invalid');
    const message = gw.status?.conditions?.[0]?.message ?? '';
    expect(message).toContain('spec.service must match pattern');
    expect(message).toContain('spec.resolutionType must be equal to one of the allowed values');
    await setLoadBalancer(env.kubeConfig('cluster-a'), 'gw', 'envoy', [{ ip: '127.0.30.4' }]);
    await both([`${A} A 127.0.30.4`, `${B} A 127.0.30.2`, `${ANY} A 127.0.30.2,127.0.30.4`]);
    expect(ops.every((o) => o.child.exitCode === null)).toBe(true);
  });

  it('an invalid GatewayDNS lets go of its watches, as a deleted one does, and holds them again once fixed', async () => {
    const management = env.kubeConfig('management');
    const dbA = `db.cluster-a.${NS}.clusters.xcc.test`;
    const writePod = async (address: string) => {
      const kc = env.kubeConfig('cluster-a');
      await apply(kc, [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'held' } } as KubernetesObject,
      ]);
      await writeHeadlessDb(kc, 'held', address);
    };
    const published = (address: string) =>
      eventually(async () => {
        const lines = recordLines(await readRecordSet(env.kubeConfig('cluster-a'), `${NS}.held`));
        if (!lines.includes(`db-0.${dbA} A ${address}`)) throw new Error(lines.join('\n'));
      }, 15_000);
    const held = (resolutionType: string) =>
      gatewayDns('held', { clusterSelector: {}, service: 'held/db', resolutionType, gatewayLabel: 'db' });
    /** "kind cluster" of the watches of namespace "held" the operator released since log line `from`. */
    const releasedSince = (op: OperatorProcess, from: number) =>
      op.logs
        .slice(from)
        .filter((l) => l.includes('"watch released"'))
        .map((l) => JSON.parse(l) as { kind: string; cluster: string; namespace: string })
        .filter((l) => l.namespace === 'held')
        .map((l) => `${l.kind} ${l.cluster}`)
        .sort();
    const all = ['EndpointSlice', 'Service'].flatMap((k) => [`${k} ${NS}/cluster-a`, `${k} ${NS}/cluster-b`]);

    await writePod('10.31.0.1');
    await apply(management, [held('headless')]);
    await published('10.31.0.1');
    const op = await leader();
    let from = op.logs.length;
    await apply(management, [held('magic')]);
    await waitForReady(management, NS, 'held', 'Invalid');
    await eventually(async () => expect(releasedSince(op, from)).toEqual(all));
    // Fixed: read again, and following the pods again, so its watches are back.
    await apply(management, [held('headless')]);
    await waitForReady(management, NS, 'held', 'Ready');
    await writePod('10.31.0.2');
    await published('10.31.0.2');
    // Held again: its deletion releases them once more.
    from = op.logs.length;
    await deleteGatewayDns(management, NS, 'held');
    await eventually(async () => expect(releasedSince(op, from)).toEqual(all));
  });

  it('fails over to the other replica within 15 s of the leader being killed', async () => {
    const old = await leader();
    await old.kill();
    const killedAt = Date.now();
    await setLoadBalancer(env.kubeConfig('cluster-a'), 'gw', 'envoy', [{ ip: '127.0.30.5' }]);
    await both([`${A} A 127.0.30.5`, `${B} A 127.0.30.2`, `${ANY} A 127.0.30.2,127.0.30.5`], 20_000);
    const ms = Date.now() - killedAt;
    process.stderr.write(`leader killed → change published by the new leader: ${ms} ms\n`);
    expect(ms).toBeLessThan(15_000);
    expect(await leader()).not.toBe(old);
  });

  it('keeps the per-pod names of a cluster unreachable since before the operator started', async () => {
    const management = env.kubeConfig('management');
    const dbA = `db.cluster-a.${NS}.clusters.xcc.test`;
    const dbB = `db.cluster-b.${NS}.clusters.xcc.test`;
    const writeDb = (cluster: string, address: string) =>
      writeHeadlessDb(env.kubeConfig(cluster), 'gw', address);
    const linesInA = async () => recordLines(await readRecordSet(env.kubeConfig('cluster-a'), `${NS}.db`));
    const hasLine = (line: string) =>
      eventually(async () => {
        const lines = await linesInA();
        if (!lines.includes(line)) throw new Error(`no "${line}" in\n  ${lines.join('\n  ')}`);
      }, 15_000);
    await writeDb('cluster-a', '10.30.1.5');
    await writeDb('cluster-b', '10.30.0.5');
    await apply(management, [
      gatewayDns('db', {
        clusterSelector: {},
        service: 'gw/db',
        resolutionType: 'headless',
        gatewayLabel: 'db',
      }),
    ]);
    const fromB = [`db-0.${dbB} A 10.30.0.5`, `_db._tcp.${dbB} SRV 0 0 5432 db-0.${dbB}.`];
    await hasLine(fromB[0]!);
    await stopCluster(env.info, 'cluster-b');
    try {
      await waitForReady(management, NS, 'db', 'ClusterUnreachable', 15_000);
      // A new operator process knows cluster-b only by the addresses in status.
      await Promise.all(ops.map((o) => o.stop()));
      ops.push(await startOperator(env.cluster('management').kubeconfig, ['--identity', 'replica-3']));
      // A change in cluster-a, published by the new process, proves it has reconciled "db".
      await writeDb('cluster-a', '10.30.1.6');
      await hasLine(`db-0.${dbA} A 10.30.1.6`);
      const lines = await linesInA();
      for (const line of fromB) expect(lines).toContain(line);
    } finally {
      await startCluster(env.info, 'cluster-b');
    }
  });
});
