// ClusterProfiles produced (--cluster-profiles=produce) for the Cluster API
// Clusters of a namespace of the shared environment, and read by a real
// consumer: test/testenv/clusterprofile, built from sigs.k8s.io/cluster-inventory-api
// v0.1.2 alone. It lists the profiles, builds a client for each with the module's
// pkg/access and its kubeconfig-secretreader exec plugin (which reads the
// Cluster's kubeconfig Secret the profile names), and lists each workload
// cluster's namespaces. No capi-dns code reads the profiles here.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  VersionApi,
} from '@kubernetes/client-node';
import type { ClusterProfile } from '../../api/index.js';
import {
  CLUSTER_API,
  ensureNamespace,
  registerWorkloadCluster,
  waitForClusterProvisioned,
} from '../support/capi.js';
import { testEnvInfo } from '../support/environment.js';
import { apply, eventually, statusCode } from '../support/kube.js';
import {
  deleteGatewayDns,
  metricsOf,
  readGatewayDns,
  startOperator,
  type OperatorProcess,
} from '../support/operator.js';
import { binPath } from '../support/paths.js';
import { clusterOf, kubeConfigOf } from '../support/testenv.js';

const info = testEnvInfo();
const NS = 'profiles-team';
const CLUSTERS = ['cluster-a', 'cluster-b'];
const INVENTORY = { group: 'multicluster.x-k8s.io', version: 'v1alpha1', plural: 'clusterprofiles' };
const management = kubeConfigOf(info, 'management');
const managementPath = clusterOf(info, 'management').kubeconfig;
const run = promisify(execFile);

interface ConsumerLine {
  profile: string;
  clusterManager: string;
  server?: string;
  namespaces?: string[];
  error?: string;
}

async function readProfile(name: string): Promise<ClusterProfile | undefined> {
  try {
    return (await management
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({ ...INVENTORY, namespace: NS, name })) as ClusterProfile;
  } catch (err) {
    if (statusCode(err) === 404) return undefined;
    throw err;
  }
}

const condition = (p: ClusterProfile | undefined, type: string) =>
  p?.status?.conditions?.find((c) => c.type === type);

async function labelNamespace(clusterSet: string | null): Promise<void> {
  await management
    .makeApiClient(CoreV1Api)
    .patchNamespace(
      { name: NS, body: { metadata: { labels: { 'multicluster.x-k8s.io/clusterset': clusterSet } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
}

describe("ClusterProfiles produced from Cluster API Clusters, read by the module's own consumer", () => {
  let op: OperatorProcess | undefined;
  let dir: string;
  /** A namespace only each workload cluster has: the consumer must reach that very cluster. */
  const marker = (cluster: string) => `profiles-probe-${cluster}`;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-profiles-'));
    for (const cluster of CLUSTERS) {
      await registerWorkloadCluster(management, {
        namespace: NS,
        cluster,
        kubeconfigPath: clusterOf(info, cluster).kubeconfig,
      });
      await ensureNamespace(kubeConfigOf(info, cluster), marker(cluster));
    }
    await Promise.all(CLUSTERS.map((c) => waitForClusterProvisioned(management, NS, c)));
    await labelNamespace('fleet-set');
    // A profile OCM keeps in the same namespace: left alone, and not what our selector lists.
    await apply(management, [
      {
        apiVersion: 'multicluster.x-k8s.io/v1alpha1',
        kind: 'ClusterProfile',
        metadata: {
          name: 'ocm-spoke',
          namespace: NS,
          labels: { 'x-k8s.io/cluster-manager': 'open-cluster-management' },
        },
        spec: { clusterManager: { name: 'open-cluster-management' } },
      } as never,
    ]);
    op = await startOperator(managementPath, [
      '--namespace',
      NS,
      '--no-leader-elect',
      '--no-manage-corefiles',
      '--cluster-profiles=produce',
    ]);
  }, 60_000);

  afterAll(async () => {
    await op?.stop();
    for (const cluster of CLUSTERS)
      await kubeConfigOf(info, cluster)
        .makeApiClient(CoreV1Api)
        .deleteNamespace({ name: marker(cluster) })
        .catch(() => undefined);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps one ClusterProfile per Cluster: its name and namespace, owned by it, labelled, Joined, with version, properties and access provider', async () => {
    for (const cluster of CLUSTERS) {
      const p = await eventually(async () => {
        const got = await readProfile(cluster);
        // ControlPlaneHealthy follows Cluster API's RemoteConnectionProbe, which can be False for a
        // probe or two while a freshly started workload API server is slow: waited for, as Joined.
        if (
          condition(got, 'Joined')?.status !== 'True' ||
          condition(got, 'ControlPlaneHealthy')?.status !== 'True' ||
          !got?.status?.version?.kubernetes
        )
          throw new Error(
            `ClusterProfile ${NS}/${cluster} not Joined and healthy with a version yet: ${JSON.stringify(got?.status)}`,
          );
        return got;
      }, 45_000);
      const owner = (await management
        .makeApiClient(CustomObjectsApi)
        .getNamespacedCustomObject({ ...CLUSTER_API, namespace: NS, name: cluster })) as {
        metadata: { uid: string };
      };
      expect(p.metadata.labels?.['x-k8s.io/cluster-manager']).toBe('cluster-api');
      expect(p.spec.clusterManager.name).toBe('cluster-api');
      expect(p.metadata.ownerReferences).toEqual([
        expect.objectContaining({
          apiVersion: 'cluster.x-k8s.io/v1beta2',
          kind: 'Cluster',
          name: cluster,
          uid: owner.metadata.uid,
        }),
      ]);
      const version = await kubeConfigOf(info, cluster).makeApiClient(VersionApi).getCode();
      expect(p.status?.version?.kubernetes).toBe(version.gitVersion);
      // Cluster API's ControlPlaneAvailable, from the control plane's Available (True in test/fixtures).
      expect(condition(p, 'ControlPlaneHealthy')).toMatchObject({
        status: 'True',
        reason: 'ControlPlaneAvailable',
      });
      expect(p.status?.properties?.map((x) => [x.name, x.value])).toEqual([
        ['cluster.clusterset.k8s.io', cluster],
        ['clusterset.k8s.io', 'fleet-set'],
      ]);
      const kubeconfig = readFileSync(clusterOf(info, cluster).kubeconfig, 'utf8');
      const server = /server: (\S+)/.exec(kubeconfig)?.[1];
      expect(p.status?.accessProviders).toEqual([
        {
          name: 'kubeconfig-secretreader',
          cluster: {
            server,
            'certificate-authority-data': expect.any(String),
            extensions: [
              {
                name: 'client.authentication.k8s.io/exec',
                extension: { name: `${cluster}-kubeconfig`, key: 'value', namespace: NS },
              },
            ],
          },
        },
      ]);
      // No credential: the token of the kubeconfig appears nowhere in the profile.
      const token = /token: (\S+)/.exec(kubeconfig)?.[1] ?? '';
      expect(token.length).toBeGreaterThan(8);
      expect(JSON.stringify(p)).not.toContain(token);
    }
    const ocm = await readProfile('ocm-spoke');
    expect(ocm?.metadata.ownerReferences).toBeUndefined();
    expect(ocm?.status).toBeUndefined();
  });

  it("the module's consumer builds a client from each profile with its kubeconfig-secretreader plugin and lists that cluster's namespaces", async () => {
    const providerFile = path.join(dir, 'provider-config.json');
    writeFileSync(
      providerFile,
      JSON.stringify({
        providers: [
          {
            name: 'kubeconfig-secretreader',
            execConfig: {
              apiVersion: 'client.authentication.k8s.io/v1',
              command: binPath('kubeconfig-secretreader-plugin'),
              provideClusterInfo: true,
            },
          },
        ],
      }),
    );
    const { stdout } = await run(
      binPath('clusterprofile-consumer'),
      [
        '--kubeconfig',
        managementPath,
        '--namespace',
        NS,
        '--selector',
        'x-k8s.io/cluster-manager=cluster-api',
        '--clusterprofile-provider-file',
        providerFile,
      ],
      // The plugin reads the kubeconfig Secret from the hub as this process's KUBECONFIG says.
      { env: { ...process.env, KUBECONFIG: managementPath }, timeout: 60_000 },
    ).catch((err: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`consumer failed: ${err.message}\n${err.stdout ?? ''}\n${err.stderr ?? ''}`);
    });
    const lines = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as ConsumerLine);
    expect(lines.map((l) => l.profile).sort()).toEqual(CLUSTERS.map((c) => `${NS}/${c}`));
    for (const line of lines) {
      const cluster = line.profile.split('/')[1]!;
      expect(line.error).toBeUndefined();
      expect(line.clusterManager).toBe('cluster-api');
      expect(line.namespaces).toContain(marker(cluster));
      for (const other of CLUSTERS.filter((c) => c !== cluster))
        expect(line.namespaces).not.toContain(marker(other));
    }
  });

  it('follows the namespace leaving its ClusterSet: the properties go (server-side apply removes them)', async () => {
    await labelNamespace(null);
    for (const cluster of CLUSTERS)
      await eventually(
        async () => expect((await readProfile(cluster))?.status?.properties).toBeUndefined(),
        15_000,
      );
    await labelNamespace('fleet-set');
    for (const cluster of CLUSTERS)
      await eventually(
        async () => expect((await readProfile(cluster))?.status?.properties).toHaveLength(2),
        15_000,
      );
  });

  it('puts back a profile someone changed', async () => {
    await management.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject(
      {
        ...INVENTORY,
        namespace: NS,
        name: 'cluster-a',
        body: { metadata: { labels: { 'x-k8s.io/cluster-manager': 'someone' } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await eventually(
      async () =>
        expect((await readProfile('cluster-a'))?.metadata.labels?.['x-k8s.io/cluster-manager']).toBe(
          'cluster-api',
        ),
      15_000,
    );
  });

  it("a mixed fleet (--inventory=both): Clusters and the other cluster managers' profiles, each cluster counted once", async () => {
    await op?.stop();
    op = await startOperator(managementPath, [
      '--namespace',
      NS,
      '--no-leader-elect',
      '--no-manage-corefiles',
      '--cluster-profiles=produce',
      '--inventory=both',
    ]);
    await apply(management, [
      {
        apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
        kind: 'GatewayDNS',
        metadata: { name: 'everyone', namespace: NS },
        spec: { clusterSelector: {}, service: 'profiles-contour/envoy', resolutionType: 'loadBalancer' },
      } as never,
    ]);
    // cluster-a and cluster-b once each (their own profiles are recognized as capi-dns's and left
    // out), and OCM's spoke, unreachable: it offers no access provider capi-dns implements.
    await eventually(async () => {
      const gw = await readGatewayDns(management, NS, 'everyone');
      expect(gw?.status?.clusters?.map((c) => c.cluster).sort()).toEqual([
        'cluster-a',
        'cluster-b',
        'ocm-spoke',
      ]);
      expect(gw?.status?.clusters?.find((c) => c.cluster === 'ocm-spoke')?.state).toBe('Unreachable');
    }, 30_000);
    // OCM's profile is not taken for a Cluster the producer failed to publish.
    expect((await metricsOf(op!))['capi_dns_cluster_profile_conflicts']).toBe(0);
    await deleteGatewayDns(management, NS, 'everyone');
  });
});
