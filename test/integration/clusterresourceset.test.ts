// The workload side installed by Cluster API's ClusterResourceSet, on the real
// Cluster API controllers of a test environment of its own (what Cluster API
// applies into the workload cluster must not meet the shared environment's
// tests): a Cluster gets config/clusterresourceset's objects only once it is
// labelled, and a changed ConfigMap (a new release) is applied again
// (strategy: Reconcile). That the installed dns-server runs and CoreDNS
// forwards to it is the pod walkthrough's part (demo/pods.ts, test/e2e).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { writeOverlay } from '../../demo/overlay.js';
import { renderClusterResourceSet } from '../../scripts/clusterresourceset/render.js';
import { WORKLOAD_LABEL } from '../../scripts/clusterresourceset/generate.js';
import { CLUSTER_API, registerWorkloadCluster } from '../support/capi.js';
import { eventually, installCrds, readManifests, statusCode } from '../support/kube.js';
import { binPath, repoRoot } from '../support/paths.js';
import { TestEnv } from '../support/testenv.js';

const run = promisify(execFile);
const NS = 'fleet';
const CLUSTER = 'crs-a';

describe('ClusterResourceSet install (config/clusterresourceset)', () => {
  let env: TestEnv;
  let dir: string;

  const kubectl = (args: string[]) =>
    run(binPath('kubectl'), ['--kubeconfig', env.cluster('management').kubeconfig, '-n', NS, ...args], {
      cwd: repoRoot(),
    });
  const deploymentImage = async (): Promise<string | undefined> => {
    try {
      const d = await env
        .kubeConfig(CLUSTER)
        .makeApiClient(AppsV1Api)
        .readNamespacedDeployment({ namespace: 'capi-dns', name: 'capi-dns-server' });
      return d.spec?.template.spec?.containers[0]?.image;
    } catch (err) {
      if (statusCode(err) === 404) return undefined;
      throw err;
    }
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-crs-'));
    env = await TestEnv.start({ workloadClusters: [CLUSTER] });
    await installCrds(env.kubeConfig('management'), readManifests(path.join(repoRoot(), 'test', 'fixtures')));
    await registerWorkloadCluster(env.kubeConfig('management'), {
      namespace: NS,
      cluster: CLUSTER,
      kubeconfigPath: env.cluster(CLUSTER).kubeconfig,
    });
  }, 120_000);

  afterAll(async () => {
    await env?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('installs into a Cluster once it is labelled, and rolls a changed ConfigMap out', async () => {
    await kubectl(['apply', '-k', 'config/clusterresourceset']);
    // Not labelled: Cluster API leaves it alone.
    await new Promise((r) => setTimeout(r, 3000));
    expect(await deploymentImage()).toBeUndefined();

    const labelled = Date.now();
    await env
      .kubeConfig('management')
      .makeApiClient(CustomObjectsApi)
      .patchNamespacedCustomObject(
        {
          ...CLUSTER_API,
          namespace: NS,
          name: CLUSTER,
          body: { metadata: { labels: { [WORKLOAD_LABEL]: 'enabled' } } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    await eventually(
      async () => expect(await deploymentImage()).toBe('ghcr.io/capi-dns/dns-server:0.1.0'),
      60_000,
      250,
    );
    process.stderr.write(
      `ClusterResourceSet: label → dns-server Deployment in the cluster: ${Date.now() - labelled} ms\n`,
    );
    // All of config/workload, the CRDs first: the dns-server's and the Multi-Cluster Services'.
    const core = env.kubeConfig(CLUSTER).makeApiClient(CoreV1Api);
    await core.readNamespacedService({ namespace: 'capi-dns', name: 'capi-dns-server' });
    const { stdout: crds } = await run(binPath('kubectl'), [
      '--kubeconfig',
      env.cluster(CLUSTER).kubeconfig,
      'get',
      'crd',
      '-o',
      'name',
    ]);
    expect(crds).toContain('dnsrecordsets.connectivity.tanzu.vmware.com');
    expect(crds).toContain('serviceexports.multicluster.x-k8s.io');
    // Cluster API's record of what it applied: written after the objects, so it may lag them.
    await eventually(
      async () => {
        const { stdout: binding } = await kubectl([
          'get',
          'clusterresourcesetbinding',
          CLUSTER,
          '-o',
          'json',
        ]);
        const applied = (
          JSON.parse(binding) as {
            spec: { bindings?: { resources?: { name: string; applied: boolean }[] }[] };
          }
        ).spec.bindings?.flatMap((b) => b.resources ?? []);
        expect(applied?.map((r) => [r.name, r.applied])).toEqual([
          ['capi-dns-workload-cluster', true],
          ['capi-dns-workload-namespaced', true],
        ]);
      },
      30_000,
      250,
    );

    // A new release: the ConfigMaps regenerated from an overlay with another tag, applied to the management cluster only.
    const overlay = writeOverlay(dir, 'upgrade', path.join(repoRoot(), 'config', 'workload'), [
      ['ghcr.io/capi-dns/dns-server', 'ghcr.io/capi-dns/dns-server:0.1.1'],
    ]);
    writeFileSync(path.join(dir, 'upgrade.yaml'), renderClusterResourceSet(overlay, binPath('kubectl')));
    const upgraded = Date.now();
    await kubectl(['apply', '-f', path.join(dir, 'upgrade.yaml')]);
    await eventually(
      async () => expect(await deploymentImage()).toBe('ghcr.io/capi-dns/dns-server:0.1.1'),
      60_000,
      250,
    );
    process.stderr.write(
      `ClusterResourceSet: ConfigMap changed → Deployment updated: ${Date.now() - upgraded} ms\n`,
    );
  }, 180_000);
});
