// Jest global setup of the integration project: one management and two
// workload clusters for the whole run, with the CRDs installed and the
// workload clusters registered the way Cluster API registers them.
import path from 'node:path';
import { TestEnv } from './testenv.js';
import { installCrds, readManifests } from './kube.js';
import { registerWorkloadCluster } from './capi.js';
import { DEV_TEAM, ENV_VAR, WORKLOAD_CLUSTERS } from './environment.js';
import { repoRoot } from './paths.js';

declare global {
  var __CAPI_DNS_TESTENV__: TestEnv | undefined;
}

export default async function globalSetup(): Promise<void> {
  const began = Date.now();
  const env = await TestEnv.start({ workloadClusters: WORKLOAD_CLUSTERS });
  globalThis.__CAPI_DNS_TESTENV__ = env;
  try {
    const root = repoRoot();
    const ours = readManifests(path.join(root, 'crds'));
    const management = env.kubeConfig('management');
    await installCrds(management, [...ours, ...readManifests(path.join(root, 'test', 'fixtures'))]);
    for (const name of WORKLOAD_CLUSTERS) {
      await installCrds(env.kubeConfig(name), ours);
      await registerWorkloadCluster(management, {
        namespace: DEV_TEAM,
        cluster: name,
        kubeconfigPath: env.cluster(name).kubeconfig,
      });
    }
  } catch (err) {
    await env.stop();
    throw err;
  }
  process.env[ENV_VAR] = JSON.stringify(env.info);
  process.stderr.write(
    `\ntest environment ready in ${Date.now() - began} ms: ${env.info.clusters.map((c) => c.name).join(', ')}\n`,
  );
}
