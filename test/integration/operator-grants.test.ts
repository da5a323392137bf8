// What a GatewayDNS author reaches in the workload clusters: without a grant,
// not kube-system (neither a Service read there nor a mirror written there);
// with the grant annotation on the management Namespace, which a tenant who
// may only write GatewayDNS objects cannot set, exactly what it names.
import { CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { ensureNamespace, registerWorkloadCluster } from '../support/capi.js';
import { testEnvInfo } from '../support/environment.js';
import { apply, eventually, statusCode } from '../support/kube.js';
import { clusterOf, kubeConfigOf } from '../support/testenv.js';
import {
  deleteGatewayDns,
  ensureRecordsNamespace,
  isSetOf,
  listRecordSets,
  setLoadBalancer,
  startOperator,
  waitForReady,
  type OperatorProcess,
} from '../support/operator.js';

const info = testEnvInfo();
const NS = 'op-grants';
const APPS = 'op-grants-apps';
const ANNOTATION = 'connectivity.tanzu.vmware.com/workload-namespaces';
const CLUSTERS = ['cluster-a', 'cluster-b'] as const;
const management = kubeConfigOf(info, 'management');
const workload: Record<string, KubeConfig> = {
  'cluster-a': kubeConfigOf(info, 'cluster-a'),
  'cluster-b': kubeConfigOf(info, 'cluster-b'),
};

function gatewayDns(name: string, spec: Record<string, unknown>) {
  return {
    apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
    kind: 'GatewayDNS',
    metadata: { name, namespace: NS },
    spec: { clusterSelector: { matchLabels: { grants: 'true' } }, resolutionType: 'loadBalancer', ...spec },
  };
}

async function grant(value: string | null): Promise<void> {
  await management
    .makeApiClient(CoreV1Api)
    .patchNamespace(
      { name: NS, body: { metadata: { annotations: { [ANNOTATION]: value } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
}

async function setsOf(cluster: string, name: string): Promise<number> {
  // Retried: a workload API server may answer 429 while another test's CRD change reinitialises its storage.
  const sets = await eventually(() => listRecordSets(workload[cluster]!), 10_000, 200);
  return sets.filter((s) => isSetOf(s, `${NS}.${name}`)).length;
}

async function mirrorIn(cluster: string, namespace: string, name: string): Promise<boolean> {
  try {
    await workload[cluster]!.makeApiClient(CoreV1Api).readNamespacedService({ namespace, name });
    return true;
  } catch (err) {
    if (statusCode(err) === 404) return false;
    throw err;
  }
}

describe('workload namespaces a GatewayDNS may reach', () => {
  let op: OperatorProcess;

  beforeAll(async () => {
    for (const cluster of CLUSTERS) {
      await registerWorkloadCluster(management, {
        namespace: NS,
        cluster,
        kubeconfigPath: clusterOf(info, cluster).kubeconfig,
        labels: { grants: 'true' },
      });
      await ensureRecordsNamespace(workload[cluster]!);
      await ensureNamespace(workload[cluster]!, APPS);
    }
    // A LoadBalancer Service in kube-system of cluster-a, and an ordinary one.
    await setLoadBalancer(workload['cluster-a']!, 'kube-system', 'grants-sneaky', [{ ip: '192.0.2.91' }]);
    await setLoadBalancer(workload['cluster-a']!, APPS, 'web', [{ ip: '192.0.2.92' }]);
    op = await startOperator(clusterOf(info, 'management').kubeconfig, [
      '--namespace',
      NS,
      '--no-leader-elect',
    ]);
  });

  afterAll(async () => {
    for (const name of ['sys', 'mir'])
      await deleteGatewayDns(management, NS, name).catch((err: unknown) => {
        if (statusCode(err) !== 404) throw err;
      });
    await op?.stop();
    await grant(null).catch(() => undefined);
    for (const [namespace, name] of [
      ['kube-system', 'grants-sneaky'],
      [APPS, 'web'],
    ] as const)
      await workload['cluster-a']!.makeApiClient(CoreV1Api)
        .deleteNamespacedService({ namespace, name })
        .catch(() => undefined);
  });

  it('refuses kube-system as the Service or the mirror without a grant, and writes nothing', async () => {
    await apply(management, [
      gatewayDns('sys', { service: 'kube-system/grants-sneaky' }),
      gatewayDns('mir', {
        service: `${APPS}/web`,
        gatewayLabel: 'web',
        mirror: { namespace: 'kube-system' },
      }),
    ]);
    const sys = await waitForReady(management, NS, 'sys', 'NamespaceNotAllowed');
    expect(sys.status?.conditions?.find((c) => c.type === 'Ready')?.message).toMatch(
      new RegExp(
        `^spec.service names workload namespace kube-system, which is not allowed: .*${ANNOTATION} on Namespace ${NS}`,
      ),
    );
    const mir = await waitForReady(management, NS, 'mir', 'NamespaceNotAllowed');
    expect(mir.status?.conditions?.find((c) => c.type === 'Ready')?.message).toMatch(
      /^spec.mirror.namespace names workload namespace kube-system/,
    );
    // Give a wrong write time to land before looking for it.
    await new Promise((r) => setTimeout(r, 1000));
    for (const cluster of CLUSTERS) {
      expect(await setsOf(cluster, 'sys')).toBe(0);
      expect(await setsOf(cluster, 'mir')).toBe(0);
    }
    expect(await mirrorIn('cluster-b', 'kube-system', 'web')).toBe(false);
  });

  it('serves both once the management Namespace grants kube-system', async () => {
    await grant(`kube-system, ${APPS}`);
    await waitForReady(management, NS, 'sys', 'Ready', 15_000);
    await waitForReady(management, NS, 'mir', 'Ready', 15_000);
    await eventually(async () => expect(await setsOf('cluster-b', 'sys')).toBeGreaterThan(0));
    await eventually(async () => expect(await mirrorIn('cluster-b', 'kube-system', 'web')).toBe(true));
  });

  it('refuses again when the grant is narrowed', async () => {
    await grant(APPS);
    await waitForReady(management, NS, 'sys', 'NamespaceNotAllowed', 15_000);
    await waitForReady(management, NS, 'mir', 'NamespaceNotAllowed', 15_000);
  });
});
