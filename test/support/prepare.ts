// The state every multi-cluster test starts from: our CRDs in every cluster,
// the ClusterProfile CRD (crds/inventory, as config/default) in the management cluster,
// the test environment's minimal Cluster API providers (test/fixtures) in the
// management cluster, and each workload cluster registered the way a provider
// registers it, provisioned by Cluster API's own controllers.
import path from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { ensureNamespace, registerWorkloadCluster, waitForClusterProvisioned } from './capi.js';
import { installCrds, readManifests } from './kube.js';
import { gatewayApiCrds, repoRoot } from './paths.js';
import type { TestEnv } from './testenv.js';

export interface PrepareOptions {
  /** The management namespace the workload clusters are registered in. */
  namespace: string;
  workloads: string[];
  /** Changes our CRDs before they go into the management cluster (an older GatewayDNS schema, say). */
  managementCrds?: (crds: KubernetesObject[]) => KubernetesObject[];
  /** Creates this namespace in every workload cluster: to the operator, the cluster then runs a dns-server. */
  recordsNamespace?: string;
  /** Labels of each workload cluster's Cluster object (tiers, selectors), by cluster name. */
  labels?: Readonly<Record<string, Record<string, string> | undefined>>;
  /** Installs the Gateway API CRDs of this channel in every workload cluster (spec.gatewayRef). */
  gatewayApi?: 'standard' | 'experimental';
}

export async function prepareClusters(env: TestEnv, opts: PrepareOptions): Promise<void> {
  const root = repoRoot();
  const ours = readManifests(path.join(root, 'crds'));
  const management = env.kubeConfig('management');
  await installCrds(management, [
    ...(opts.managementCrds ? opts.managementCrds(ours) : ours),
    ...readManifests(path.join(root, 'crds', 'inventory')),
    ...readManifests(path.join(root, 'test', 'fixtures')),
  ]);
  for (const cluster of opts.workloads) {
    const kc = env.kubeConfig(cluster);
    await installCrds(kc, [
      ...ours,
      ...(opts.gatewayApi ? readManifests(gatewayApiCrds(opts.gatewayApi)) : []),
    ]);
    await registerWorkloadCluster(management, {
      namespace: opts.namespace,
      cluster,
      kubeconfigPath: env.cluster(cluster).kubeconfig,
      ...(opts.labels?.[cluster] ? { labels: opts.labels[cluster] } : {}),
    });
    if (opts.recordsNamespace) await ensureNamespace(kc, opts.recordsNamespace);
  }
  // Cluster API marks them provisioned within a second or two; tests and benches time from here.
  await Promise.all(opts.workloads.map((c) => waitForClusterProvisioned(management, opts.namespace, c)));
}
