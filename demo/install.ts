// capi-dns from config/ on clusters with real nodes, as a user installs it:
// CoreDNS as kubeadm runs it, `kubectl apply -k config/default` on the
// management cluster, and the workload side by Cluster API's
// ClusterResourceSet (config/clusterresourceset, generated from an overlay of
// config/workload): nothing is run against a workload cluster. The overlays
// only point the images at `npm run images`. Shared by the
// walkthrough with real pods (demo/pods.ts) and the MCS conformance run
// (test/conformance/mcs.ts).
import { readFileSync, writeFileSync } from 'node:fs';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { renderClusterResourceSet } from '../scripts/clusterresourceset/render.js';
import { WORKLOAD_LABEL, WORKLOAD_LABEL_VALUE } from '../scripts/clusterresourceset/generate.js';
import { CLUSTER_API } from '../test/support/capi.js';
import { eventually } from '../test/support/kube.js';
import path from 'node:path';
import type { BuiltImage } from '../test/support/images.js';
import { imageRef } from '../test/support/nodes.js';
import { binPath, repoRoot } from '../test/support/paths.js';
import type { TestEnv } from '../test/support/testenv.js';
import type { Kubectl } from './kubectl.js';
import { writeOverlay } from './overlay.js';

/** config/dns-server spreads the replicas one per node; a one-node cluster lets them share it. */
export const ONE_NODE_SPREAD = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: capi-dns-server
  namespace: capi-dns
spec:
  template:
    spec:
      topologySpreadConstraints:
        - $patch: replace
        - maxSkew: 1
          topologyKey: kubernetes.io/hostname
          whenUnsatisfiable: ScheduleAnyway
          labelSelector:
            matchLabels:
              app.kubernetes.io/name: capi-dns-server`;

export interface NodeInstall {
  /** Where the rendered manifests and overlays go. */
  dir: string;
  env: TestEnv;
  images: Map<string, BuiltImage>;
  kubectl: (cluster: string) => Kubectl;
  /** kubectl wait's --timeout. */
  wait: string;
}

/** CoreDNS in each cluster, at the address kubelet gives pods; resolves once every one is Available. */
export async function installCoreDns(i: NodeInstall, clusters: readonly string[]): Promise<void> {
  const template = readFileSync(path.join(repoRoot(), 'demo', 'manifests', 'coredns.yaml'), 'utf8');
  for (const cluster of clusters) {
    const file = path.join(i.dir, `coredns-${cluster}.yaml`);
    writeFileSync(
      file,
      template
        .replaceAll('COREDNS_IMAGE', imageRef(i.images, 'coredns'))
        .replaceAll('DNS_IP', i.env.node(cluster).dnsIP),
    );
    await i.kubectl(cluster).run(['apply', '-f', file]);
  }
  for (const cluster of clusters) await available(i, cluster, 'kube-system', 'deployment/coredns');
}

/** `kubectl apply -k config/default`; resolves once the operator Deployment is Available. */
export async function installOperator(i: NodeInstall, management: string): Promise<void> {
  const overlay = writeOverlay(i.dir, 'default', path.join(repoRoot(), 'config', 'default'), [
    ['ghcr.io/capi-dns/capi-dns-controller', imageRef(i.images, 'capi-dns-controller')],
  ]);
  await i.kubectl(management).run(['apply', '-k', overlay]);
  await available(i, management, 'capi-dns-system', 'deployment/capi-dns-controller');
}

/**
 * The workload side by ClusterResourceSet: the overlay of config/workload rendered into ConfigMaps
 * and a ClusterResourceSet in the Clusters' management namespace, then each Cluster labelled
 * capi-dns.io/workload=enabled; Cluster API applies it. Resolves once every dns-server Deployment
 * is Available.
 */
export async function installDnsServers(
  i: NodeInstall,
  management: string,
  namespace: string,
  clusters: readonly string[],
): Promise<void> {
  const overlay = writeOverlay(
    i.dir,
    'workload',
    path.join(repoRoot(), 'config', 'workload'),
    [['ghcr.io/capi-dns/dns-server', imageRef(i.images, 'dns-server')]],
    // One node per cluster here: both replicas on it, as config/README.md says to patch.
    [ONE_NODE_SPREAD],
  );
  const file = path.join(i.dir, 'clusterresourceset.yaml');
  writeFileSync(file, renderClusterResourceSet(overlay, binPath('kubectl')));
  await i.kubectl(management).run(['-n', namespace, 'apply', '-f', file]);
  const custom = i.env.kubeConfig(management).makeApiClient(CustomObjectsApi);
  for (const cluster of clusters)
    await custom.patchNamespacedCustomObject(
      {
        ...CLUSTER_API,
        namespace,
        name: cluster,
        body: { metadata: { labels: { [WORKLOAD_LABEL]: WORKLOAD_LABEL_VALUE } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  // kubectl wait needs the Deployment to exist: Cluster API creates it a moment after the label.
  for (const cluster of clusters)
    await eventually(
      () => i.kubectl(cluster).run(['-n', 'capi-dns', 'get', 'deployment/capi-dns-server']),
      120_000,
      500,
    );
  for (const cluster of clusters) await available(i, cluster, 'capi-dns', 'deployment/capi-dns-server');
}

function available(i: NodeInstall, cluster: string, namespace: string, what: string): Promise<string> {
  return i
    .kubectl(cluster)
    .run(['-n', namespace, 'wait', what, '--for=condition=Available', `--timeout=${i.wait}`]);
}
