// Registers workload clusters in the management cluster exactly as Cluster
// API does: a Cluster object, and its kubeconfig in the Secret
// "<cluster>-kubeconfig" (key "value", label cluster.x-k8s.io/cluster-name).
import { readFileSync } from 'node:fs';
import { CoreV1Api, KubeConfig, KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { apply, statusCode } from './kube.js';

export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';

export async function ensureNamespace(kc: KubeConfig, name: string): Promise<void> {
  const api = kc.makeApiClient(CoreV1Api);
  try {
    await api.createNamespace({ body: { metadata: { name } } });
  } catch (err) {
    if (statusCode(err) !== 409) throw err;
  }
}

export interface RegisterOptions {
  namespace: string;
  cluster: string;
  /** The workload cluster's kubeconfig file. */
  kubeconfigPath: string;
  labels?: Record<string, string>;
  /** Created paused (spec.paused), as clusterctl move creates the copy on the target. */
  paused?: boolean;
}

export async function registerWorkloadCluster(management: KubeConfig, opts: RegisterOptions): Promise<void> {
  await ensureNamespace(management, opts.namespace);
  const [created] = await apply(management, [
    {
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Cluster',
      metadata: { name: opts.cluster, namespace: opts.namespace, labels: opts.labels ?? {} },
      spec: {
        controlPlaneEndpoint: { host: '127.0.0.1', port: 6443 },
        ...(opts.paused ? { paused: true } : {}),
      },
    } as KubernetesObject,
  ]);
  await writeKubeconfigSecret(
    management,
    opts,
    readFileSync(opts.kubeconfigPath, 'utf8'),
    created?.metadata?.uid,
  );
}

/** Creates or replaces the Cluster API kubeconfig Secret (also used to simulate rotation). */
export async function writeKubeconfigSecret(
  management: KubeConfig,
  opts: Pick<RegisterOptions, 'namespace' | 'cluster'>,
  kubeconfig: string,
  clusterUid?: string,
): Promise<void> {
  const secret: KubernetesObject & { type: string; data: Record<string, string> } = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: `${opts.cluster}-kubeconfig`,
      namespace: opts.namespace,
      labels: { [CLUSTER_NAME_LABEL]: opts.cluster },
      ...(clusterUid
        ? {
            ownerReferences: [
              {
                apiVersion: 'cluster.x-k8s.io/v1beta1',
                kind: 'Cluster',
                name: opts.cluster,
                uid: clusterUid,
              },
            ],
          }
        : {}),
    },
    type: 'cluster.x-k8s.io/secret',
    data: { value: Buffer.from(kubeconfig).toString('base64') },
  };
  await apply(management, [secret]);
}

/** Builds a client for a workload cluster only from its kubeconfig Secret in the management cluster. */
export async function kubeConfigFromSecret(
  management: KubeConfig,
  namespace: string,
  cluster: string,
): Promise<KubeConfig> {
  const objects = KubernetesObjectApi.makeApiClient(management);
  const secret = (await objects.read({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `${cluster}-kubeconfig`, namespace },
  })) as KubernetesObject & { data?: Record<string, string> };
  const value = secret.data?.value;
  if (!value) throw new Error(`secret ${namespace}/${cluster}-kubeconfig has no key "value"`);
  const kc = new KubeConfig();
  kc.loadFromString(Buffer.from(value, 'base64').toString('utf8'));
  return kc;
}
