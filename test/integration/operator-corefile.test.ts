// The operator keeps each workload cluster's CoreDNS forwarding the zone:
// the Corefile reconciler against a real API server, on an environment of its
// own (it edits kube-system/coredns, which other tests must not see change).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { CLUSTER_API } from '../support/capi.js';
import { TestEnv } from '../support/testenv.js';
import { eventually } from '../support/kube.js';
import { repoRoot } from '../support/paths.js';
import { runOperatorToExit, startOperator, type OperatorProcess } from '../support/operator.js';
import { prepareClusters } from '../support/prepare.js';

const NS = 'corefile-team';
const CLUSTER = 'cluster-c';
const MARKER = '# capi-dns: forward the cross-cluster zone';
const KUBEADM = readFileSync(
  path.join(repoRoot(), 'operator', 'corefile', 'testdata', 'kubeadm.Corefile'),
  'utf8',
);

describe('operator: CoreDNS Corefile wiring', () => {
  let env: TestEnv;
  let op: OperatorProcess | undefined;
  let workload: KubeConfig;
  let management: KubeConfig;
  let core: CoreV1Api;

  const corefile = async () =>
    (await core.readNamespacedConfigMap({ name: 'coredns', namespace: 'kube-system' })).data?.Corefile ?? '';
  const setCorefile = (text: string) =>
    core.patchNamespacedConfigMap(
      { name: 'coredns', namespace: 'kube-system', body: { data: { Corefile: text } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  const waitForCorefile = (check: (text: string) => boolean, what: string, timeoutMs = 10_000) =>
    eventually(
      async () => {
        const text = await corefile();
        if (!check(text)) throw new Error(`Corefile ${what}: got\n${text}`);
        return text;
      },
      timeoutMs,
      100,
    );
  const annotateCluster = (annotations: Record<string, string | null>) =>
    management.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject(
      {
        ...CLUSTER_API,
        namespace: NS,
        name: CLUSTER,
        body: { metadata: { annotations } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );

  beforeAll(async () => {
    env = await TestEnv.start({ workloadClusters: [CLUSTER] });
    management = env.kubeConfig('management');
    workload = env.kubeConfig(CLUSTER);
    core = workload.makeApiClient(CoreV1Api);
    await prepareClusters(env, { namespace: NS, workloads: [CLUSTER] });
    await core.createNamespacedConfigMap({
      namespace: 'kube-system',
      body: { metadata: { name: 'coredns' }, data: { Corefile: KUBEADM } },
    });
    await core.createNamespace({ body: { metadata: { name: 'capi-dns' } } });
    await core.createNamespacedService({
      namespace: 'capi-dns',
      body: {
        metadata: { name: 'capi-dns-server' },
        spec: {
          selector: { app: 'dns-server' },
          ports: [
            { name: 'dns-udp', port: 53, targetPort: 5353, protocol: 'UDP' },
            { name: 'dns-tcp', port: 53, targetPort: 5353, protocol: 'TCP' },
          ],
        },
      },
    });
    op = await startOperator(env.cluster('management').kubeconfig, ['--no-leader-elect']);
  }, 120_000);

  afterAll(async () => {
    await op?.stop();
    await env?.stop();
  }, 60_000);

  it('forwards the zone to the dns-server Service, every other byte kept', async () => {
    const svc = await core.readNamespacedService({ name: 'capi-dns-server', namespace: 'capi-dns' });
    const ip = svc.spec?.clusterIP ?? '';
    const text = await waitForCorefile((t) => t.includes(`forward . ${ip}`), `forwarding to ${ip}`);
    expect(text.startsWith(KUBEADM)).toBe(true);
    expect(text).toContain(MARKER);
    expect(text).toMatch(/\nxcc\.test:53 \{/);
  });

  it('follows the forward-address annotation of the Service', async () => {
    const api = workload.makeApiClient(CoreV1Api);
    await api.patchNamespacedService(
      {
        name: 'capi-dns-server',
        namespace: 'capi-dns',
        body: {
          metadata: { annotations: { 'connectivity.tanzu.vmware.com/forward-address': '192.0.2.53:5353' } },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await waitForCorefile((t) => t.includes('forward . 192.0.2.53:5353'), 'following the annotation');
  });

  it('puts the block back when someone removes it by hand', async () => {
    await setCorefile(KUBEADM);
    await waitForCorefile((t) => t.includes(MARKER) && t.startsWith(KUBEADM), 'restored');
  });

  it('leaves a Corefile it cannot parse alone and reports it on the Cluster', async () => {
    const broken = `${KUBEADM}\nbroken.example {\n    forward . 1.1.1.1\n`;
    await setCorefile(broken);
    await eventually(
      async () => {
        const events = await management.makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: NS });
        const found = events.items.find(
          (e) => e.involvedObject.name === CLUSTER && e.reason === 'CorefileUnparseable',
        );
        if (!found) throw new Error('no CorefileUnparseable event yet');
        expect(found.type).toBe('Warning');
      },
      10_000,
      200,
    );
    await new Promise((r) => setTimeout(r, 1000));
    expect(await corefile()).toBe(broken);
    await setCorefile(KUBEADM);
    await waitForCorefile((t) => t.includes(MARKER), 'patched again once parseable');
  });

  it('forwards clusterset.local too while the management namespace is a ClusterSet, and stops when it leaves', async () => {
    const label = (value: string | null) =>
      management
        .makeApiClient(CoreV1Api)
        .patchNamespace(
          { name: NS, body: { metadata: { labels: { 'multicluster.x-k8s.io/clusterset': value } } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
    await label('corefile-set');
    const both = await waitForCorefile(
      (t) => /\nclusterset\.local:53 \{/.test(t),
      'forwarding clusterset.local',
    );
    expect(both).toMatch(/\nxcc\.test:53 \{/);
    expect(both.startsWith(KUBEADM)).toBe(true);
    await label(null);
    await waitForCorefile(
      (t) => !t.includes('clusterset.local') && t.includes(MARKER),
      'clusterset.local gone, xcc.test kept',
    );
  });

  it('removes the block when the Cluster opts out, and adds it when it opts in again', async () => {
    await annotateCluster({ 'connectivity.tanzu.vmware.com/coredns': 'unmanaged' });
    await waitForCorefile((t) => t === KUBEADM, 'back to the original');
    await annotateCluster({ 'connectivity.tanzu.vmware.com/coredns': null });
    await waitForCorefile((t) => t.includes(MARKER), 'patched again');
  });

  it('removes the block when the dns-server Service goes away', async () => {
    await core.deleteNamespacedService({ name: 'capi-dns-server', namespace: 'capi-dns' });
    await waitForCorefile((t) => t === KUBEADM, 'back to the original');
    await core.createNamespacedService({
      namespace: 'capi-dns',
      body: {
        metadata: { name: 'capi-dns-server' },
        spec: { selector: { app: 'dns-server' }, ports: [{ name: 'dns-udp', port: 53, protocol: 'UDP' }] },
      },
    });
    await waitForCorefile((t) => t.includes(MARKER), 'patched again');
  });

  it('forwards each further zone (--zone) in a block of its own, to the same dns-server', async () => {
    await op?.stop();
    op = await startOperator(env.cluster('management').kubeconfig, [
      '--no-leader-elect',
      '--zone',
      'apps.corp.internal',
    ]);
    const text = await waitForCorefile(
      (t) => /\napps\.corp\.internal:53 \{/.test(t),
      'forwarding apps.corp.internal',
    );
    expect(text).toMatch(/\nxcc\.test:53 \{/);
    expect(text.startsWith(KUBEADM)).toBe(true);
    // Both blocks forward to the dns-server Service's cluster IP.
    const targets = [...text.matchAll(/forward \. (\S+)/g)].map((m) => m[1]);
    expect(new Set(targets.slice(-2)).size).toBe(1);
  });

  it('--cleanup-corefiles removes the blocks from every cluster and exits 0', async () => {
    await op?.stop();
    op = undefined;
    const { code, logs } = await runOperatorToExit(env.cluster('management').kubeconfig, [
      '--no-leader-elect',
      '--cleanup-corefiles',
      '--zone',
      'apps.corp.internal',
    ]);
    expect({ code, logs: code === 0 ? '' : logs }).toEqual({ code: 0, logs: '' });
    expect(await corefile()).toBe(KUBEADM);
  });
});
