// Registers workload clusters in the management cluster the way a Cluster API
// infrastructure and control plane provider does, against the real Cluster
// API controllers of the test environment (testenv --cluster-api): a Cluster
// (cluster.x-k8s.io/v1beta2) whose references point at the test environment's
// minimal provider objects (test/fixtures/testenv-providers.yaml), those
// objects marked provisioned and initialized as a provider's controller marks
// them, and the kubeconfig Secret "<cluster>-kubeconfig" (key "value", label
// cluster.x-k8s.io/cluster-name) that a control plane provider writes. Cluster
// API's own controllers then set the Cluster's phase and conditions.
import { readFileSync } from 'node:fs';
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { apply, eventually, statusCode } from './kube.js';

export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
/** Where tests read and write Clusters (CustomObjectsApi arguments without the namespace). */
export const CLUSTER_API = { group: 'cluster.x-k8s.io', version: 'v1beta2', plural: 'clusters' } as const;
export const INFRASTRUCTURE = {
  group: 'infrastructure.testenv.capi-dns.io',
  version: 'v1alpha1',
  kind: 'TestenvCluster',
  plural: 'testenvclusters',
} as const;
export const CONTROL_PLANE = {
  group: 'controlplane.testenv.capi-dns.io',
  version: 'v1alpha1',
  kind: 'TestenvControlPlane',
  plural: 'testenvcontrolplanes',
} as const;

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
  /**
   * Leaves the control plane uninitialized and writes no kubeconfig Secret, as while a provider
   * is still creating the cluster; markControlPlaneInitialized() finishes it.
   */
  provisioning?: boolean;
}

export async function registerWorkloadCluster(management: KubeConfig, opts: RegisterOptions): Promise<void> {
  await ensureNamespace(management, opts.namespace);
  const kubeconfig = readFileSync(opts.kubeconfigPath, 'utf8');
  const server = new URL(serverOf(kubeconfig));
  const [, controlPlane] = await apply(management, [
    providerObject(INFRASTRUCTURE, opts, {
      controlPlaneEndpoint: { host: server.hostname, port: Number(server.port || 443) },
    }),
    providerObject(CONTROL_PLANE, opts, {}),
  ]);
  await markProvisioned(management, opts, !opts.provisioning);
  await apply(management, [
    {
      apiVersion: `${CLUSTER_API.group}/${CLUSTER_API.version}`,
      kind: 'Cluster',
      metadata: { name: opts.cluster, namespace: opts.namespace, labels: opts.labels ?? {} },
      spec: {
        infrastructureRef: { apiGroup: INFRASTRUCTURE.group, kind: INFRASTRUCTURE.kind, name: opts.cluster },
        controlPlaneRef: { apiGroup: CONTROL_PLANE.group, kind: CONTROL_PLANE.kind, name: opts.cluster },
        ...(opts.paused ? { paused: true } : {}),
      },
    } as KubernetesObject,
  ]);
  if (!opts.provisioning)
    await writeKubeconfigSecret(management, opts, kubeconfig, controlPlane?.metadata?.uid);
}

/** Finishes a cluster registered with `provisioning`: its control plane is up, its kubeconfig written. */
export async function markControlPlaneInitialized(
  management: KubeConfig,
  opts: Pick<RegisterOptions, 'namespace' | 'cluster' | 'kubeconfigPath'>,
): Promise<void> {
  await markProvisioned(management, opts, true);
  const controlPlane = await management
    .makeApiClient(CustomObjectsApi)
    .getNamespacedCustomObject({ ...CONTROL_PLANE, namespace: opts.namespace, name: opts.cluster });
  await writeKubeconfigSecret(
    management,
    opts,
    readFileSync(opts.kubeconfigPath, 'utf8'),
    (controlPlane as KubernetesObject).metadata?.uid,
  );
}

/**
 * Waits until Cluster API's own controllers report the Cluster's infrastructure provisioned and its
 * control plane initialized (and so until the operator may connect to it).
 */
export async function waitForClusterProvisioned(
  management: KubeConfig,
  namespace: string,
  cluster: string,
  timeoutMs = 30_000,
): Promise<void> {
  await eventually(async () => {
    const got = (await management
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({ ...CLUSTER_API, namespace, name: cluster })) as {
      status?: {
        initialization?: { infrastructureProvisioned?: boolean; controlPlaneInitialized?: boolean };
      };
    };
    const init = got.status?.initialization;
    if (init?.infrastructureProvisioned !== true || init.controlPlaneInitialized !== true)
      throw new Error(`Cluster ${namespace}/${cluster}: not provisioned yet (${JSON.stringify(init ?? {})})`);
  }, timeoutMs);
}

/**
 * What `clusterctl move` does to the source's objects once the target has its copies: the Cluster
 * is paused already, so no controller acts; each object's finalizers are removed and the object
 * deleted (the Cluster, its provider objects, its kubeconfig Secret).
 */
export async function deleteMovedCluster(
  management: KubeConfig,
  namespace: string,
  cluster: string,
): Promise<void> {
  const custom = management.makeApiClient(CustomObjectsApi);
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  const ignoreGone = (err: unknown) => {
    if (statusCode(err) !== 404) throw err;
  };
  for (const kind of [CLUSTER_API, INFRASTRUCTURE, CONTROL_PLANE]) {
    const ref = { group: kind.group, version: kind.version, plural: kind.plural, namespace, name: cluster };
    await custom
      .patchNamespacedCustomObject({ ...ref, body: { metadata: { finalizers: null } } }, merge)
      .catch(ignoreGone);
    await custom.deleteNamespacedCustomObject(ref).catch(ignoreGone);
  }
  await management
    .makeApiClient(CoreV1Api)
    .deleteNamespacedSecret({ namespace, name: `${cluster}-kubeconfig` })
    .catch(ignoreGone);
}

function providerObject(
  kind: typeof INFRASTRUCTURE | typeof CONTROL_PLANE,
  opts: Pick<RegisterOptions, 'namespace' | 'cluster'>,
  spec: object,
): KubernetesObject {
  return {
    apiVersion: `${kind.group}/${kind.version}`,
    kind: kind.kind,
    metadata: { name: opts.cluster, namespace: opts.namespace },
    spec,
  } as KubernetesObject;
}

/** What the providers' controllers write in status once the machines are up (contract v1beta2). */
async function markProvisioned(
  management: KubeConfig,
  opts: Pick<RegisterOptions, 'namespace' | 'cluster'>,
  initialized: boolean,
): Promise<void> {
  const custom = management.makeApiClient(CustomObjectsApi);
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await custom.patchNamespacedCustomObjectStatus(
    {
      ...INFRASTRUCTURE,
      namespace: opts.namespace,
      name: opts.cluster,
      body: { status: { initialization: { provisioned: true } } },
    },
    merge,
  );
  await custom.patchNamespacedCustomObjectStatus(
    {
      ...CONTROL_PLANE,
      namespace: opts.namespace,
      name: opts.cluster,
      body: {
        status: {
          initialization: { controlPlaneInitialized: initialized },
          conditions: [
            {
              type: 'Available',
              status: initialized ? 'True' : 'False',
              reason: initialized ? 'Available' : 'NotAvailable',
              message: '',
              lastTransitionTime: now,
            },
          ],
        },
      },
    },
    merge,
  );
}

function serverOf(kubeconfig: string): string {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('kubeconfig has no server');
  return server;
}

/** Creates or replaces the Cluster API kubeconfig Secret (also used to simulate rotation). */
export async function writeKubeconfigSecret(
  management: KubeConfig,
  opts: Pick<RegisterOptions, 'namespace' | 'cluster'>,
  kubeconfig: string,
  /** The control plane object that owns it, as a control plane provider's Secret is owned. */
  controlPlaneUid?: string,
): Promise<void> {
  const secret: KubernetesObject & { type: string; data: Record<string, string> } = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: `${opts.cluster}-kubeconfig`,
      namespace: opts.namespace,
      labels: { [CLUSTER_NAME_LABEL]: opts.cluster },
      ...(controlPlaneUid
        ? {
            ownerReferences: [
              {
                apiVersion: `${CONTROL_PLANE.group}/${CONTROL_PLANE.version}`,
                kind: CONTROL_PLANE.kind,
                name: opts.cluster,
                uid: controlPlaneUid,
                controller: true,
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
