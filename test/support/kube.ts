// Small Kubernetes helpers for tests, all through @kubernetes/client-node.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import {
  ApiextensionsV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  Watch,
  loadAllYaml,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { httpStatus } from '../../runtime/kube-errors.js';
import { RestartingInformer, type CachingInformer } from '../../runtime/restarting-informer.js';

export const TEST_FIELD_MANAGER = 'capi-dns-tests';

/** Reads every YAML document of one file, or of every *.yaml file of a folder. */
export function readManifests(fileOrDir: string): KubernetesObject[] {
  const files = fileOrDir.endsWith('.yaml')
    ? [fileOrDir]
    : readdirSync(fileOrDir)
        .filter((f) => f.endsWith('.yaml'))
        .sort()
        .map((f) => path.join(fileOrDir, f));
  return files.flatMap((f) => (loadAllYaml(readFileSync(f, 'utf8')) as KubernetesObject[]).filter(Boolean));
}

/** Server-side apply, as kubectl apply --server-side would. */
export async function apply(kc: KubeConfig, objects: KubernetesObject[]): Promise<KubernetesObject[]> {
  const client = KubernetesObjectApi.makeApiClient(kc);
  const out: KubernetesObject[] = [];
  for (const obj of objects) {
    out.push(
      await client.patch(obj, undefined, undefined, TEST_FIELD_MANAGER, true, PatchStrategy.ServerSideApply),
    );
  }
  return out;
}

/** Applies CRDs and waits until the API server serves them. */
/** A RoleBinding of the Role named `user` to the user of that name (an impersonated test user's rights). */
export function roleBindingForUser(user: string, namespace: string): KubernetesObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: user, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: user },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  } as KubernetesObject;
}

export async function installCrds(kc: KubeConfig, objects: KubernetesObject[]): Promise<void> {
  await apply(kc, objects);
  const api = kc.makeApiClient(ApiextensionsV1Api);
  for (const crd of objects) {
    const name = crd.metadata?.name ?? '';
    await eventually(async () => {
      const got = await api.readCustomResourceDefinition({ name });
      const established = got.status?.conditions?.some(
        (c) => c.type === 'Established' && c.status === 'True',
      );
      if (!established) throw new Error(`CRD ${name} not established yet`);
    }, 30_000);
  }
}

/** Retries fn until it stops throwing or the time is up; rethrows the last error then. */
export async function eventually<T>(fn: () => Promise<T>, timeoutMs = 10_000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}

/** The HTTP status of a client-node ApiException, or undefined for other errors (the processes' helper). */
export { httpStatus as statusCode };

export interface WatchedEvent<T> {
  type: string;
  object: T;
}

/**
 * Every event of one watch (path as the API server spells it, e.g.
 * /apis/g/v/namespaces/ns/kinds), from now until stop(): a test that must show
 * something never happened, not merely that it is not there at the end.
 */
export async function recordEvents<T>(
  kc: KubeConfig,
  path: string,
): Promise<{ events: WatchedEvent<T>[]; stop(): void }> {
  const events: WatchedEvent<T>[] = [];
  let failure: unknown;
  const open = () =>
    new Watch(kc).watch(
      path,
      {},
      (type, object: T) => events.push({ type, object }),
      (err: unknown) => {
        if (err) failure = err;
      },
    );
  let controller = await open();
  // A CRD established a moment ago answers 429 while its storage initialises; client-node reports a
  // watch refused at the start before watch() returns, so it is opened again, for up to 10 s.
  for (const started = Date.now(); httpStatus(failure) === 429 && Date.now() - started < 10_000;) {
    failure = undefined;
    await new Promise((r) => setTimeout(r, 100));
    controller = await open();
  }
  return {
    events,
    stop() {
      const failed = failure;
      controller.abort();
      if (failed) throw new Error(`watch ${path} failed: ${String(failed)}`);
    },
  };
}

/**
 * Starts an informer that starts again 200 ms after any error until the returned stop is called.
 * client-node's informer stops on any error but 410, and a freshly established CRD answers 429
 * ("storage is (re)initializing") for a moment: runtime/restarting-informer.ts, as the operator
 * and the dns-server use it, with a fixed wait and no relist.
 */
export async function startRestarting<T extends KubernetesObject>(
  informer: CachingInformer<T>,
): Promise<() => Promise<void>> {
  const restarting = new RestartingInformer<T>({
    make: () => informer,
    backoff: { minMs: 200, maxMs: 200 },
  });
  restarting.start();
  await restarting.waitForFirstAttempt();
  return () => restarting.stop();
}
