// Jest global setup of the integration project: one management and two
// workload clusters for the whole run, with the CRDs installed and the
// workload clusters registered the way Cluster API registers them.
import { TestEnv } from './testenv.js';
import { DEV_TEAM, ENV_VAR, WORKLOAD_CLUSTERS } from './environment.js';
import { prepareClusters } from './prepare.js';

declare global {
  var __CAPI_DNS_TESTENV__: TestEnv | undefined;
}

export default async function globalSetup(): Promise<void> {
  const began = Date.now();
  const env = await TestEnv.start({ workloadClusters: WORKLOAD_CLUSTERS });
  globalThis.__CAPI_DNS_TESTENV__ = env;
  try {
    await prepareClusters(env, { namespace: DEV_TEAM, workloads: WORKLOAD_CLUSTERS });
  } catch (err) {
    await env.stop();
    throw err;
  }
  process.env[ENV_VAR] = JSON.stringify(env.info);
  process.stderr.write(
    `\ntest environment ready in ${Date.now() - began} ms: ${env.info.clusters.map((c) => c.name).join(', ')}\n`,
  );
}
