// Proves the test environment is real: a LoadBalancer Service written in a
// workload cluster, its status set through the status subresource as a cloud
// controller would, read back through a client built only from the Cluster
// API kubeconfig Secret in the management cluster.
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { kubeConfigFromSecret, ensureNamespace } from '../support/capi.js';
import { DEV_TEAM, testEnvInfo } from '../support/environment.js';
import { kubeConfigOf } from '../support/testenv.js';
import { eventually } from '../support/kube.js';

const info = testEnvInfo();

describe('test environment', () => {
  it('runs one management and two workload API servers on 127.0.0.1', async () => {
    expect(info.clusters.map((c) => [c.name, c.role])).toEqual([
      ['management', 'management'],
      ['cluster-a', 'workload'],
      ['cluster-b', 'workload'],
    ]);
    for (const c of info.clusters) {
      expect(c.server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const version = await kubeConfigOf(info, c.name).makeApiClient(CoreV1Api).listNamespace();
      expect(version.items.map((n) => n.metadata?.name)).toContain('kube-system');
    }
  });

  it('reads a LoadBalancer status through a client built from the kubeconfig Secret', async () => {
    const direct = kubeConfigOf(info, 'cluster-a').makeApiClient(CoreV1Api);
    const namespace = 'smoke';
    await ensureNamespace(kubeConfigOf(info, 'cluster-a'), namespace);
    await direct.createNamespacedService({
      namespace,
      body: {
        metadata: { name: 'envoy' },
        spec: {
          type: 'LoadBalancer',
          ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
          selector: { app: 'envoy' },
        },
      },
    });
    await direct.patchNamespacedServiceStatus(
      { name: 'envoy', namespace, body: { status: { loadBalancer: { ingress: [{ ip: '127.0.10.1' }] } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );

    const management = kubeConfigOf(info, 'management');
    const viaSecret = (await kubeConfigFromSecret(management, DEV_TEAM, 'cluster-a')).makeApiClient(
      CoreV1Api,
    );
    const svc = await eventually(async () => {
      const s = await viaSecret.readNamespacedService({ name: 'envoy', namespace });
      if (!s.status?.loadBalancer?.ingress?.length) throw new Error('no ingress yet');
      return s;
    });
    expect(svc.spec?.type).toBe('LoadBalancer');
    expect(svc.spec?.ports?.[0]?.nodePort).toBeGreaterThan(0);
    expect(svc.status?.loadBalancer?.ingress?.map((i) => i.ip)).toEqual(['127.0.10.1']);
    // Defaulted by the real API server, which no hand-written fake would do.
    expect(svc.status?.loadBalancer?.ingress?.[0]?.ipMode).toBe('VIP');

    // The other workload cluster is a separate API server: it has no such Service.
    const other = (await kubeConfigFromSecret(management, DEV_TEAM, 'cluster-b')).makeApiClient(CoreV1Api);
    await expect(other.readNamespacedService({ name: 'envoy', namespace })).rejects.toMatchObject({
      code: 404,
    });
  });

  it('has the Cluster API objects and CRDs installed', async () => {
    const management = kubeConfigOf(info, 'management');
    const secretApi = management.makeApiClient(CoreV1Api);
    const secret = await secretApi.readNamespacedSecret({
      name: 'cluster-b-kubeconfig',
      namespace: DEV_TEAM,
    });
    expect(secret.metadata?.labels?.['cluster.x-k8s.io/cluster-name']).toBe('cluster-b');
    expect(secret.type).toBe('cluster.x-k8s.io/secret');
    expect(Object.keys(secret.data ?? {})).toEqual(['value']);
  });
});
