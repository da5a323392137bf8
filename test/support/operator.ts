// Runs capi-dns-controller as a child process (node dist/operator/main.js),
// as it runs in production, and helpers to drive and read what it acts on.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  CoreV1Api,
  CustomObjectsApi,
  makeInformer,
  PatchStrategy,
  type Informer,
  type ObjectCache,
  type KubernetesListObject,
  setHeaderOptions,
  type KubeConfig,
  type V1LoadBalancerIngress,
} from '@kubernetes/client-node';
import {
  GATEWAYDNS_NAME_LABEL,
  GATEWAYDNS_NAMESPACE_LABEL,
  type ClusterStatus,
  type DNSRecord,
} from '../../api/index.js';
import { mergeRecords } from '../../operator/gatewaydns/plan/desired.js';
import { repoRoot } from './paths.js';
import { freePort } from './dns.js';
import { stopChild } from './stop-child.js';
import { eventually, statusCode } from './kube.js';
import { ensureNamespace } from './capi.js';

export interface OperatorProcess {
  child: ChildProcess;
  health: string;
  logs: string[];
  /** SIGTERM, then SIGKILL after 10 s. */
  stop(): Promise<void>;
  /** SIGKILL: a crash, the Lease is not released. */
  kill(): Promise<void>;
}

/**
 * The Node flags a build's operator is deployed with (operator/node-flags.ts, as its image's
 * entrypoint sets them): a bench's reference build runs with its own, none if it has none.
 */
async function deployedNodeFlags(dist: string): Promise<readonly string[]> {
  const file = path.join(dist, 'operator', 'node-flags.js');
  if (!existsSync(file)) return [];
  const flags: { OPERATOR_NODE_FLAGS: readonly string[] } = await import(pathToFileURL(file).href);
  return flags.OPERATOR_NODE_FLAGS;
}

/**
 * The built operator against a cluster, its log on stderr (a pipe), nothing on stdin or stdout;
 * Node started with the build's deployed flags, then nodeArgs.
 */
async function spawnOperator(
  kubeconfigPath: string,
  healthListen: string,
  args: string[],
  nodeArgs: string[] = [],
  dist = path.join(repoRoot(), 'dist'),
): Promise<ChildProcess> {
  return spawn(
    process.execPath,
    [
      ...(await deployedNodeFlags(dist)),
      ...nodeArgs,
      path.join(dist, 'operator', 'main.js'),
      '--kubeconfig',
      kubeconfigPath,
      '--health-listen',
      healthListen,
      ...args,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
}

/** nodeArgs go to Node itself, before the script (e.g. --heapsnapshot-signal). */
export async function startOperator(
  kubeconfigPath: string,
  args: string[] = [],
  nodeArgs: string[] = [],
  /** dist: another build's dist folder (a bench's reference); this repository's by default. */
  opts: { dist?: string } = {},
): Promise<OperatorProcess> {
  const health = `127.0.0.1:${await freePort()}`;
  const child = await spawnOperator(kubeconfigPath, health, args, nodeArgs, opts.dist);
  const logs: string[] = [];
  let partial = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    logs.push(...lines);
    if (process.env.OPERATOR_LOGS) lines.forEach((l) => process.stderr.write(`[operator] ${l}\n`));
  });
  const signal = (sig: NodeJS.Signals) => stopChild(child, 10_000, sig);
  try {
    await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`operator exited: ${logs.slice(-5).join('\n')}`);
      const res = await fetch(`http://${health}/healthz`);
      if (!res.ok) throw new Error(`healthz ${res.status}`);
    }, 15_000);
  } catch (err) {
    // Not healthy in time: do not leave the process running behind the failed test.
    await signal('SIGKILL');
    const tail = [...logs, ...(partial ? [partial] : [])].slice(-20).join('\n');
    throw new Error(
      `operator did not become healthy on ${health}: ${err instanceof Error ? err.message : String(err)}\n--- last lines of its log ---\n${tail}`,
    );
  }
  return { child, health, logs, stop: () => signal('SIGTERM'), kill: () => signal('SIGKILL') };
}

/**
 * Runs the operator for a one-shot job (--cleanup-mirrors, --cleanup-corefiles) and waits for it
 * to exit by itself; killed after timeoutMs, and in any case never left running behind the test.
 */
export async function runOperatorToExit(
  kubeconfigPath: string,
  args: string[],
  timeoutMs = 60_000,
): Promise<{ code: number | null; logs: string }> {
  const child = await spawnOperator(kubeconfigPath, '127.0.0.1:0', args);
  let logs = '';
  child.stderr?.on('data', (chunk: Buffer) => (logs += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  try {
    return { code: await exited, logs };
  } finally {
    clearTimeout(timer);
    await stopChild(child, 5_000, 'SIGKILL');
  }
}

export async function metricsOf(op: OperatorProcess): Promise<Record<string, number>> {
  return metricsAt(op.health);
}

/** The operator's /metrics at host:port (its --health-listen) as "name{labels}" → value. */
export async function metricsAt(health: string): Promise<Record<string, number>> {
  const text = await (await fetch(`http://${health}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+(?:\{[^}]*\})?) ([-0-9.e+]+)$/.exec(line);
    if (m) out[m[1]!] = Number(m[2]);
  }
  return out;
}

/** A LoadBalancer Service (created if missing) whose status gets the given ingress, as a cloud controller would set it. */
export async function setLoadBalancer(
  kc: KubeConfig,
  namespace: string,
  name: string,
  ingress: V1LoadBalancerIngress[],
): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  await ensureNamespace(kc, namespace);
  try {
    await core.createNamespacedService({
      namespace,
      body: {
        metadata: { name },
        spec: {
          type: 'LoadBalancer',
          ports: [{ name: 'https', port: 443, protocol: 'TCP' }],
          selector: { app: name },
        },
      },
    });
  } catch (err) {
    if (statusCode(err) !== 409) throw err;
  }
  await core.patchNamespacedServiceStatus(
    { name, namespace, body: { status: { loadBalancer: { ingress } } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

export interface RecordSetObject {
  metadata: { name: string; resourceVersion: string; labels?: Record<string, string> };
  spec: { records: { name: string; type: string; ttl?: number; values: string[] }[] };
}

/** An informer (not started) of a cluster's DNSRecordSets in one namespace, as the benches watch them. */
export function recordSetInformer(
  kc: KubeConfig,
  namespace = 'capi-dns',
): Informer<RecordSetObject> & ObjectCache<RecordSetObject> {
  return makeInformer<RecordSetObject>(
    kc,
    `/apis/connectivity.tanzu.vmware.com/v1alpha1/namespaces/${namespace}/dnsrecordsets`,
    () =>
      kc.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
        group: 'connectivity.tanzu.vmware.com',
        version: 'v1alpha1',
        namespace,
        plural: 'dnsrecordsets',
      }) as Promise<KubernetesListObject<RecordSetObject>>,
  );
}

export async function listRecordSets(kc: KubeConfig, namespace = 'capi-dns'): Promise<RecordSetObject[]> {
  const res = (await kc.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
    group: 'connectivity.tanzu.vmware.com',
    version: 'v1alpha1',
    namespace,
    plural: 'dnsrecordsets',
  })) as { items: RecordSetObject[] };
  return res.items;
}

/**
 * What one GatewayDNS ("<namespace>.<name>") publishes in a cluster: its record
 * sets (one per source cluster) merged by name and type, as a dns-server
 * merges them; undefined when it has none there.
 */
export async function readRecordSet(
  kc: KubeConfig,
  gatewayDns: string,
  namespace = 'capi-dns',
): Promise<RecordSetObject | undefined> {
  const sets = (await listRecordSets(kc, namespace)).filter((s) => isSetOf(s, gatewayDns));
  if (!sets.length) return undefined;
  return {
    metadata: { name: gatewayDns, resourceVersion: sets.map((s) => s.metadata.resourceVersion).join(',') },
    spec: { records: mergeRecords(sets.map((s) => s.spec.records as DNSRecord[])) },
  };
}

/** Whether a record set belongs to the GatewayDNS "<namespace>.<name>" (namespaces have no dots). */
export function isSetOf(set: Pick<RecordSetObject, 'metadata'>, gatewayDns: string): boolean {
  const dot = gatewayDns.indexOf('.');
  const labels = set.metadata.labels ?? {};
  return (
    labels[GATEWAYDNS_NAMESPACE_LABEL] === gatewayDns.slice(0, dot) &&
    labels[GATEWAYDNS_NAME_LABEL] === gatewayDns.slice(dot + 1)
  );
}

/** The records of one set as "name TYPE v1,v2" lines, sorted: easy to compare in tests. */
export function recordLines(set: RecordSetObject | undefined): string[] {
  return (set?.spec.records ?? []).map((r) => `${r.name} ${r.type} ${[...r.values].sort().join(',')}`).sort();
}

export async function waitForRecords(
  kc: KubeConfig,
  name: string,
  want: string[],
  timeoutMs = 10_000,
): Promise<RecordSetObject | undefined> {
  return eventually(
    async () => {
      const set = await readRecordSet(kc, name);
      const got = recordLines(set);
      if (JSON.stringify(got) !== JSON.stringify([...want].sort()))
        throw new Error(
          `record set ${name}: got\n  ${got.join('\n  ')}\nwant\n  ${[...want].sort().join('\n  ')}`,
        );
      return set;
    },
    timeoutMs,
    50,
  );
}

export interface GatewayDnsObject {
  metadata: { name: string; namespace: string; generation?: number; finalizers?: string[] };
  spec: Record<string, unknown>;
  status?: {
    observedGeneration?: number;
    selectedClusters?: number;
    conditions?: {
      type: string;
      status: string;
      reason: string;
      message: string;
      lastTransitionTime: string;
    }[];
    clusters?: ClusterStatus[];
  };
}

const GW = { group: 'connectivity.tanzu.vmware.com', version: 'v1alpha1', plural: 'gatewaydns' };

export async function readGatewayDns(
  kc: KubeConfig,
  namespace: string,
  name: string,
): Promise<GatewayDnsObject | undefined> {
  try {
    return (await kc
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({ ...GW, namespace, name })) as GatewayDnsObject;
  } catch (err) {
    if (statusCode(err) === 404) return undefined;
    throw err;
  }
}

export async function deleteGatewayDns(kc: KubeConfig, namespace: string, name: string): Promise<void> {
  await kc.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({ ...GW, namespace, name });
}

/** Waits until the GatewayDNS's Ready condition has the given reason (and status). */
export async function waitForReady(
  kc: KubeConfig,
  namespace: string,
  name: string,
  reason: string,
  timeoutMs = 10_000,
): Promise<GatewayDnsObject> {
  return eventually(
    async () => {
      const gw = await readGatewayDns(kc, namespace, name);
      const ready = gw?.status?.conditions?.find((c) => c.type === 'Ready');
      if (ready?.reason !== reason || gw?.status?.observedGeneration !== gw?.metadata.generation)
        throw new Error(
          `gatewaydns ${namespace}/${name}: Ready ${ready?.status}/${ready?.reason} (${ready?.message}), want ${reason}`,
        );
      return gw!;
    },
    timeoutMs,
    50,
  );
}

export async function ensureRecordsNamespace(kc: KubeConfig, namespace = 'capi-dns'): Promise<void> {
  await ensureNamespace(kc, namespace);
}
