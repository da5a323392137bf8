// A Cluster API kubeconfig Secret is written by whoever may write Secrets in
// the Cluster's namespace: the operator must build a client only from its
// inline credentials. An exec kubeconfig must not run its command, a
// token-file kubeconfig must not make the operator send a file of its own
// (here the admin token, standing for its ServiceAccount token) to the server
// the Secret names; both are refused with the cluster and the field in the
// GatewayDNS status, and the shape Cluster API writes keeps working. And of
// the Secrets Cluster API labels with a cluster's name (CA, etcd keys, …) the
// operator reads only "<cluster>-kubeconfig": a heap snapshot of the running
// operator holds no byte of the others.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CoreV1Api, type KubernetesObject } from '@kubernetes/client-node';
import { parse, stringify } from 'yaml';
import { writeKubeconfigSecret } from '../support/capi.js';
import { apply, eventually } from '../support/kube.js';
import { TestEnv } from '../support/testenv.js';
import {
  readGatewayDns,
  setLoadBalancer,
  startOperator,
  waitForReady,
  waitForRecords,
  type OperatorProcess,
} from '../support/operator.js';
import { prepareClusters } from '../support/prepare.js';

const NS = 'kubeconfig-team';
const SET = `${NS}.gw`;
const A = `*.gateway.cluster-a.${NS}.clusters.xcc.test`;
const B = `*.gateway.cluster-b.${NS}.clusters.xcc.test`;
const ANY = `*.gateway.${NS}.clusters.xcc.test`;

interface KubeconfigDoc {
  users: { name: string; user: Record<string, unknown> }[];
}

describe('capi-dns-controller with untrusted kubeconfig Secrets', () => {
  let env: TestEnv;
  let op: OperatorProcess | undefined;
  let dir: string;
  /** cluster-b's kubeconfig as Cluster API writes it (inline token and CA data). */
  let goodB: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-kubeconfig-'));
    env = await TestEnv.start({ workloadClusters: ['cluster-a', 'cluster-b'] });
    await prepareClusters(env, {
      namespace: NS,
      workloads: ['cluster-a', 'cluster-b'],
      recordsNamespace: 'capi-dns',
    });
    goodB = readFileSync(env.cluster('cluster-b').kubeconfig, 'utf8');
    await setLoadBalancer(env.kubeConfig('cluster-a'), 'gw', 'envoy', [{ ip: '127.0.40.1' }]);
    await setLoadBalancer(env.kubeConfig('cluster-b'), 'gw', 'envoy', [{ ip: '127.0.40.2' }]);
    op = await startOperator(
      env.cluster('management').kubeconfig,
      ['--no-leader-elect'],
      // A heap snapshot on demand, written into this test's folder.
      ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`],
    );
    await apply(env.kubeConfig('management'), [
      {
        apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
        kind: 'GatewayDNS',
        metadata: { name: 'gw', namespace: NS },
        spec: { clusterSelector: {}, service: 'gw/envoy' },
      } as KubernetesObject,
    ]);
  }, 120_000);

  afterAll(async () => {
    await op?.stop();
    await env?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  /** cluster-b's real kubeconfig with its user's fields replaced. */
  function withUser(user: Record<string, unknown>): string {
    const doc = parse(goodB) as KubeconfigDoc;
    doc.users[0]!.user = user;
    return stringify(doc);
  }

  /** Waits until cluster-b's status entry names the refused field, and returns that message. */
  async function refusedWith(field: string): Promise<string> {
    const management = env.kubeConfig('management');
    return eventually(
      async () => {
        const gw = await readGatewayDns(management, NS, 'gw');
        const b = gw?.status?.clusters?.find((c) => c.cluster === 'cluster-b');
        if (!b?.lastError?.includes(field))
          throw new Error(`cluster-b: ${b?.state} ${b?.lastError ?? ''}, want an error naming ${field}`);
        return b.lastError;
      },
      20_000,
      100,
    );
  }

  async function restoreB(): Promise<void> {
    await writeKubeconfigSecret(env.kubeConfig('management'), { namespace: NS, cluster: 'cluster-b' }, goodB);
    await waitForReady(env.kubeConfig('management'), NS, 'gw', 'Ready', 30_000);
  }

  it('works with the kubeconfig Cluster API writes (inline credentials and CA data)', async () => {
    for (const c of ['cluster-a', 'cluster-b'])
      await waitForRecords(env.kubeConfig(c), SET, [
        `${A} A 127.0.40.1`,
        `${B} A 127.0.40.2`,
        `${ANY} A 127.0.40.1,127.0.40.2`,
      ]);
    await waitForReady(env.kubeConfig('management'), NS, 'gw', 'Ready');
  });

  it('does not run the command of an exec kubeconfig, and says which cluster and field it refused', async () => {
    const marker = path.join(dir, 'exec-ran');
    const hostile = withUser({
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: '/bin/sh',
        args: [
          '-c',
          `touch ${marker}; echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"x"}}'`,
        ],
        interactiveMode: 'Never',
      },
    });
    try {
      await writeKubeconfigSecret(
        env.kubeConfig('management'),
        { namespace: NS, cluster: 'cluster-b' },
        hostile,
      );
      const message = await refusedWith('users[0].user.exec');
      expect(message).toContain(`${NS}/cluster-b`);
      expect(message).toContain(`${NS}/cluster-b-kubeconfig`);
      expect(message).toContain('--insecure-kubeconfig-exec');
      // Time for any watch, probe or retry that would have run it.
      await new Promise((r) => setTimeout(r, 3_000));
      expect(existsSync(marker)).toBe(false);
      expect(op?.logs.some((l) => l.includes('users[0].user.exec') && l.includes(`${NS}/cluster-b`))).toBe(
        true,
      );
      // A warning Event on the GatewayDNS, where `kubectl describe` shows it.
      const core = env.kubeConfig('management').makeApiClient(CoreV1Api);
      await eventually(async () => {
        const events = await core.listNamespacedEvent({ namespace: NS });
        const found = events.items.some(
          (e) =>
            e.type === 'Warning' &&
            e.involvedObject.kind === 'GatewayDNS' &&
            e.message?.includes('users[0].user.exec'),
        );
        if (!found) throw new Error('no warning Event naming users[0].user.exec');
      }, 10_000);
      // The other cluster goes on; cluster-b's last known address stays published.
      await waitForRecords(env.kubeConfig('cluster-a'), SET, [
        `${A} A 127.0.40.1`,
        `${B} A 127.0.40.2`,
        `${ANY} A 127.0.40.1,127.0.40.2`,
      ]);
    } finally {
      await restoreB();
    }
  });

  it('refuses a token-file kubeconfig: the operator sends no file of its own', async () => {
    // A file of the operator that holds a credential, as its ServiceAccount token is.
    const tokenFile = path.join(dir, 'token');
    const token = (parse(goodB) as KubeconfigDoc).users[0]!.user.token as string;
    writeFileSync(tokenFile, token, { mode: 0o600 });
    try {
      await writeKubeconfigSecret(
        env.kubeConfig('management'),
        { namespace: NS, cluster: 'cluster-b' },
        withUser({ 'token-file': tokenFile }),
      );
      const message = await refusedWith('users[0].user.token-file');
      expect(message).toContain(`${NS}/cluster-b`);
      const gw = await readGatewayDns(env.kubeConfig('management'), NS, 'gw');
      expect(gw?.status?.clusters?.find((c) => c.cluster === 'cluster-b')?.state).toBe('Unreachable');
    } finally {
      await restoreB();
    }
  });

  it('takes the Cluster API kubeconfig back after a refused one', async () => {
    await setLoadBalancer(env.kubeConfig('cluster-b'), 'gw', 'envoy', [{ ip: '127.0.40.3' }]);
    for (const c of ['cluster-a', 'cluster-b'])
      await waitForRecords(env.kubeConfig(c), SET, [
        `${A} A 127.0.40.1`,
        `${B} A 127.0.40.3`,
        `${ANY} A 127.0.40.1,127.0.40.3`,
      ]);
  });

  /** The operator's heap as Node writes it on SIGUSR2 (after a full GC): the text of the snapshot. */
  async function heapSnapshot(): Promise<Buffer> {
    const before = new Set(readdirSync(dir));
    op!.child.kill('SIGUSR2');
    const file = await eventually(
      async () => {
        const name = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
        if (!name) throw new Error('no heap snapshot yet');
        const full = path.join(dir, name);
        const size = statSync(full).size;
        // Written synchronously on the main thread: once /healthz answers again, it is complete.
        const res = await fetch(`http://${op!.health}/healthz`);
        if (!res.ok || size === 0 || statSync(full).size !== size)
          throw new Error('heap snapshot being written');
        return full;
      },
      60_000,
      200,
    );
    const text = readFileSync(file);
    rmSync(file);
    return text;
  }

  it('never reads the other Secrets labelled with a cluster name (CA and etcd keys): only <cluster>-kubeconfig', async () => {
    const management = env.kubeConfig('management');
    const key = Buffer.from(`-----BEGIN RSA PRIVATE KEY----- ${randomUUID()}`).toString('base64');
    await apply(
      management,
      ['cluster-a-ca', 'cluster-a-etcd', 'cluster-a-sa'].map(
        (name) =>
          ({
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name, namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': 'cluster-a' } },
            type: 'cluster.x-k8s.io/secret',
            data: { 'tls.crt': key, 'tls.key': key },
          }) as KubernetesObject,
      ),
    );
    // A watch event takes milliseconds; the old informer had cached them by then.
    await new Promise((r) => setTimeout(r, 2_000));
    // The operator still works from the kubeconfig Secret, which it does read.
    await waitForReady(management, NS, 'gw', 'Ready');
    const heap = await heapSnapshot();
    // The control: the data of a Secret the operator holds is visible in its heap.
    const kubeconfigData = Buffer.from(goodB).toString('base64').slice(0, 120);
    expect(heap.includes(kubeconfigData)).toBe(true);
    expect(heap.includes(key)).toBe(false);
  });
});
