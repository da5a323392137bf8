// capi-dns on a fleet that is not Cluster API's (--inventory=cluster-profile):
// no Cluster API in the management cluster, only ClusterProfiles written the
// way OCM writes them (cluster manager open-cluster-management, its label,
// ControlPlaneHealthy and Joined, and an access provider whose credentials sit
// in a Secret of the profile's namespace). The walkthrough's GatewayDNS
// selects them by their labels, Multi-Cluster Services joins them, a profile
// whose control plane is unhealthy keeps its answers as an unreachable
// cluster does, and a profile asking for an exec plugin reads as unreachable
// with the reason.
import path from 'node:path';
import { readFileSync } from 'node:fs';
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { parse } from 'yaml';
import { writeEndpointSlice } from '../support/endpointslices.js';
import { apply, eventually, installCrds, readManifests, statusCode } from '../support/kube.js';
import {
  ensureRecordsNamespace,
  readGatewayDns,
  setLoadBalancer,
  startOperator,
  waitForRecords,
  type OperatorProcess,
} from '../support/operator.js';
import { ensureNamespace } from '../support/capi.js';
import { repoRoot } from '../support/paths.js';
import { TestEnv } from '../support/testenv.js';

const NS = 'ocm-fleet';
const SPOKES = ['spoke-a', 'spoke-b'];
const SVC_NS = 'contour';
const APPS = 'apps';
const INVENTORY = { group: 'multicluster.x-k8s.io', version: 'v1alpha1', plural: 'clusterprofiles' };
const MCS = { group: 'multicluster.x-k8s.io', version: 'v1beta1' };
const SET = `${NS}.gw`;
const A = `*.gateway.spoke-a.${NS}.clusters.xcc.test`;
const B = `*.gateway.spoke-b.${NS}.clusters.xcc.test`;
const ANY = `*.gateway.${NS}.clusters.xcc.test`;

interface KubeconfigDoc {
  clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
  users: { user: { token: string } }[];
}

describe('an OCM fleet of ClusterProfiles, no Cluster API (--inventory=cluster-profile)', () => {
  let env: TestEnv;
  let op: OperatorProcess | undefined;
  const kc = (cluster: string): KubeConfig => env.kubeConfig(cluster);
  const management = () => kc('management');

  /** The profile as OCM's cluster-inventory integration writes it; credentials by kubeconfig-secretreader or secretreader. */
  const writeProfile = async (
    name: string,
    labels: Record<string, string>,
    access: { provider: string; extension: Record<string, unknown>; cluster: string },
    healthy = true,
  ) => {
    const doc = parse(readFileSync(env.cluster(access.cluster).kubeconfig, 'utf8')) as KubeconfigDoc;
    const cluster = doc.clusters[0]!.cluster;
    await apply(management(), [
      {
        apiVersion: 'multicluster.x-k8s.io/v1alpha1',
        kind: 'ClusterProfile',
        metadata: {
          name,
          namespace: NS,
          labels: { 'x-k8s.io/cluster-manager': 'open-cluster-management', ...labels },
        },
        spec: { displayName: name, clusterManager: { name: 'open-cluster-management' } },
      } as KubernetesObject,
    ]);
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await management()
      .makeApiClient(CustomObjectsApi)
      .patchNamespacedCustomObjectStatus(
        {
          ...INVENTORY,
          namespace: NS,
          name,
          body: {
            status: {
              conditions: [
                {
                  type: 'ControlPlaneHealthy',
                  status: healthy ? 'True' : 'False',
                  reason: healthy ? 'ManagedClusterAvailable' : 'ManagedClusterLeaseExpired',
                  message: healthy ? 'available' : 'the lease of the managed cluster expired',
                  lastTransitionTime: now,
                },
                {
                  type: 'Joined',
                  status: 'True',
                  reason: 'ManagedClusterJoined',
                  message: 'joined',
                  lastTransitionTime: now,
                },
              ],
              version: { kubernetes: 'v1.35.4' },
              accessProviders: [
                {
                  name: access.provider,
                  cluster: {
                    server: cluster.server,
                    'certificate-authority-data': cluster['certificate-authority-data'],
                    extensions: [{ name: 'client.authentication.k8s.io/exec', extension: access.extension }],
                  },
                },
              ],
            },
          },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
  };

  beforeAll(async () => {
    env = await TestEnv.start({ workloadClusters: SPOKES, clusterApi: false });
    const root = repoRoot();
    await installCrds(management(), [
      ...readManifests(path.join(root, 'crds')),
      ...readManifests(path.join(root, 'crds', 'inventory')),
    ]);
    await ensureNamespace(management(), NS);
    const core = management().makeApiClient(CoreV1Api);
    for (const spoke of SPOKES) {
      await installCrds(kc(spoke), [
        ...readManifests(path.join(root, 'crds')),
        ...readManifests(path.join(root, 'crds', 'mcs')),
      ]);
      await ensureRecordsNamespace(kc(spoke));
      await ensureNamespace(kc(spoke), APPS);
    }
    // spoke-a: a kubeconfig in a Secret (kubeconfig-secretreader); spoke-b: a token (secretreader).
    await core.createNamespacedSecret({
      namespace: NS,
      body: {
        metadata: { name: 'spoke-a-kubeconfig' },
        stringData: { kubeconfig: readFileSync(env.cluster('spoke-a').kubeconfig, 'utf8') },
      },
    });
    const tokenB = (parse(readFileSync(env.cluster('spoke-b').kubeconfig, 'utf8')) as KubeconfigDoc).users[0]!
      .user.token;
    await core.createNamespacedSecret({
      namespace: NS,
      body: { metadata: { name: 'spoke-b' }, stringData: { token: tokenB } },
    });
    await writeProfile(
      'spoke-a',
      { hasContour: 'true' },
      {
        provider: 'kubeconfig-secretreader',
        extension: { name: 'spoke-a-kubeconfig', key: 'kubeconfig' },
        cluster: 'spoke-a',
      },
    );
    await writeProfile(
      'spoke-b',
      { hasContour: 'true' },
      {
        provider: 'secretreader',
        extension: { clusterName: 'spoke-b' },
        cluster: 'spoke-b',
      },
    );
    await setLoadBalancer(kc('spoke-a'), SVC_NS, 'envoy', [{ ip: '127.0.20.1' }]);
    await setLoadBalancer(kc('spoke-b'), SVC_NS, 'envoy', [{ ip: '127.0.20.2' }]);
    op = await startOperator(env.cluster('management').kubeconfig, [
      '--namespace',
      NS,
      '--no-leader-elect',
      '--no-manage-corefiles',
      '--inventory=cluster-profile',
    ]);
  }, 180_000);

  afterAll(async () => {
    await op?.stop();
    await env?.stop();
  });

  it("the walkthrough's GatewayDNS selects the profiles by label and publishes both clusters' addresses", async () => {
    await apply(management(), [
      {
        apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
        kind: 'GatewayDNS',
        metadata: { name: 'gw', namespace: NS },
        spec: {
          clusterSelector: { matchLabels: { hasContour: 'true' } },
          service: `${SVC_NS}/envoy`,
          resolutionType: 'loadBalancer',
        },
      } as KubernetesObject,
    ]);
    const want = [`${A} A 127.0.20.1`, `${ANY} A 127.0.20.1,127.0.20.2`, `${B} A 127.0.20.2`];
    for (const spoke of SPOKES) await waitForRecords(kc(spoke), SET, want, 20_000);
  });

  it('ControlPlaneHealthy=False: taken as unreachable, its answers kept, the reason in the status', async () => {
    await writeProfile(
      'spoke-b',
      { hasContour: 'true' },
      {
        provider: 'secretreader',
        extension: { clusterName: 'spoke-b' },
        cluster: 'spoke-b',
      },
      false,
    );
    await eventually(async () => {
      const gw = await readGatewayDns(management(), NS, 'gw');
      const b = gw?.status?.clusters?.find((c) => c.cluster === 'spoke-b');
      expect(b?.state).toBe('Unreachable');
      expect(`${b?.message ?? ''} ${b?.lastError ?? ''}`).toMatch(/ControlPlaneHealthy is False/);
    }, 15_000);
    // Failover as for any cluster that does not answer: its last addresses stay published.
    await waitForRecords(kc('spoke-a'), SET, [
      `${A} A 127.0.20.1`,
      `${ANY} A 127.0.20.1,127.0.20.2`,
      `${B} A 127.0.20.2`,
    ]);
    await writeProfile(
      'spoke-b',
      { hasContour: 'true' },
      {
        provider: 'secretreader',
        extension: { clusterName: 'spoke-b' },
        cluster: 'spoke-b',
      },
    );
    await eventually(async () => {
      const gw = await readGatewayDns(management(), NS, 'gw');
      expect(gw?.status?.clusters?.find((c) => c.cluster === 'spoke-b')?.state).toBe('Ready');
    }, 15_000);
  });

  it('a profile whose access provider is an exec plugin reads as unreachable, and says why', async () => {
    await writeProfile(
      'spoke-x',
      { hasContour: 'true' },
      { provider: 'gke-fleet', extension: {}, cluster: 'spoke-a' },
    );
    await eventually(async () => {
      const gw = await readGatewayDns(management(), NS, 'gw');
      const x = gw?.status?.clusters?.find((c) => c.cluster === 'spoke-x');
      expect(x?.state).toBe('Unreachable');
      expect(`${x?.message ?? ''} ${x?.lastError ?? ''}`).toMatch(
        /no access provider capi-dns implements in process/,
      );
    }, 15_000);
    await management()
      .makeApiClient(CustomObjectsApi)
      .deleteNamespacedCustomObject({ ...INVENTORY, namespace: NS, name: 'spoke-x' });
  });

  it('Multi-Cluster Services: the profiles of a ClusterSet namespace are its members', async () => {
    await management()
      .makeApiClient(CoreV1Api)
      .patchNamespace(
        { name: NS, body: { metadata: { labels: { 'multicluster.x-k8s.io/clusterset': 'ocm-set' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    await kc('spoke-a')
      .makeApiClient(CoreV1Api)
      .createNamespacedService({
        namespace: APPS,
        body: {
          metadata: { name: 'web' },
          spec: { ports: [{ name: 'http', port: 80 }], selector: { app: 'web' } },
        },
      });
    await writeEndpointSlice(kc('spoke-a'), {
      namespace: APPS,
      service: 'web',
      name: 'web-1',
      addressType: 'IPv4',
      endpoints: [{ pod: 'web-0', address: '10.30.0.1' }],
      ports: [{ name: 'http', port: 8080 }],
    });
    await kc('spoke-a')
      .makeApiClient(CustomObjectsApi)
      .createNamespacedCustomObject({
        ...MCS,
        namespace: APPS,
        plural: 'serviceexports',
        body: { apiVersion: `${MCS.group}/${MCS.version}`, kind: 'ServiceExport', metadata: { name: 'web' } },
      });
    await eventually(async () => {
      try {
        const si = (await kc('spoke-b')
          .makeApiClient(CustomObjectsApi)
          .getNamespacedCustomObject({ ...MCS, namespace: APPS, plural: 'serviceimports', name: 'web' })) as {
          status?: { clusters?: { cluster: string }[] };
        };
        expect(si.status?.clusters).toEqual([{ cluster: 'spoke-a' }]);
      } catch (err) {
        if (statusCode(err) === 404)
          throw new Error(`no ServiceImport web in spoke-b yet; operator: ${op?.logs.slice(-15).join('\n')}`);
        throw err;
      }
    }, 20_000);
  });
});
