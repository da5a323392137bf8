// Test environments with nodes (testenv --nodes): the images of
// `npm run images` on every node, pods run to completion, and what a node
// costs in memory.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { CoreV1Api, type KubeConfig, type V1Container } from '@kubernetes/client-node';
import { buildImages, type BuiltImage, type ImageName } from './images.js';
import { eventually } from './kube.js';
import { TestEnv, type NodeOptions, type TestEnvNode } from './testenv.js';

/** Every built image on every node; the pause image as the sandbox image. */
export function nodeOptionsOf(images: Map<string, BuiltImage>): NodeOptions {
  return {
    images: [...images.values()].map((i) => ({ archive: i.archive, ref: i.ref })),
    sandboxImage: imageRef(images, 'pause'),
  };
}

export function imageRef(images: Map<string, BuiltImage>, name: ImageName): string {
  const image = images.get(name);
  if (!image) throw new Error(`images.json has no image ${name}`);
  return image.ref;
}

/** Nodes need root: network namespaces, cgroups, mounts. */
export function requireRootForNodes(): void {
  if (process.getuid?.() !== 0)
    throw new Error('nodes need root (network namespaces, cgroups, mounts): run this as root');
}

/**
 * Starts an environment whose every cluster has a node with the images on it;
 * builds (or reuses) the images unless given.
 */
export async function startWithNodes(
  workloadClusters: string[],
  built?: Map<string, BuiltImage>,
): Promise<{ env: TestEnv; images: Map<string, BuiltImage> }> {
  requireRootForNodes();
  const images = built ?? (await buildImages());
  const env = await TestEnv.start({ workloadClusters, nodes: nodeOptionsOf(images), timeoutMs: 300_000 });
  return { env, images };
}

/** Runs one container as a pod until it ends; its log, or an error with the log if it failed. */
export async function runPod(
  kc: KubeConfig,
  namespace: string,
  name: string,
  container: Omit<V1Container, 'name'>,
  timeoutMs = 60_000,
): Promise<string> {
  const api = kc.makeApiClient(CoreV1Api);
  await api.createNamespacedPod({
    namespace,
    body: {
      metadata: { name },
      spec: {
        restartPolicy: 'Never',
        containers: [{ name, imagePullPolicy: 'IfNotPresent', ...container }],
      },
    },
  });
  try {
    const phase = await eventually(
      async () => {
        const pod = await api.readNamespacedPod({ name, namespace });
        const p = pod.status?.phase;
        if (p !== 'Succeeded' && p !== 'Failed') throw new Error(`pod ${namespace}/${name} is ${p}`);
        return p;
      },
      timeoutMs,
      200,
    );
    const log = await api.readNamespacedPodLog({ name, namespace });
    if (phase === 'Failed') throw new Error(`pod ${namespace}/${name} failed: ${log}`);
    return log;
  } finally {
    await api.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 }).catch(() => undefined);
  }
}

/** Resident memory in MiB of each process in a node's network namespace, by command name. */
export function nodeMemory(node: TestEnvNode): Record<string, number> {
  const pids = execFileSync('ip', ['netns', 'pids', node.netns], { encoding: 'utf8' })
    .split(/\s+/)
    .filter(Boolean);
  const out: Record<string, number> = {};
  for (const pid of pids) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const name = /^Name:\s+(\S+)/m.exec(status)?.[1] ?? pid;
      const kb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      out[name] = Math.round(((out[name] ?? 0) + kb / 1024) * 10) / 10;
    } catch {
      // ended meanwhile
    }
  }
  return out;
}
