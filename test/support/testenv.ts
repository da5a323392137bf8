// Starts and stops the real multi-cluster control plane of test/testenv: one
// process with an embedded etcd and one kube-apiserver per cluster, and Cluster
// API's core controller manager (with its CRDs and webhooks) on the management
// cluster.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, openSync, closeSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { KubeConfig } from '@kubernetes/client-node';
import { binPath, clusterApiManifests } from './paths.js';
import { stopChild } from './stop-child.js';

export interface TestEnvCluster {
  name: string;
  role: 'management' | 'workload';
  server: string;
  kubeconfig: string;
  /** The cluster's node, when the environment was started with nodes. */
  node?: TestEnvNode;
}

/** A cluster's node: containerd, kubelet and kube-proxy in their own network namespace. */
export interface TestEnvNode {
  name: string;
  ip: string;
  /** The host's address on the nodes' bridge. */
  hostIP: string;
  netns: string;
  /** containerd's socket (ctr --address …, namespace k8s.io). */
  containerd: string;
  podCIDR: string;
  serviceCIDR: string;
  /** Addresses a test may give LoadBalancer Services of this cluster: every node routes them to this one. */
  loadBalancerCIDR: string;
  /** The nameserver kubelet gives pods (dnsPolicy ClusterFirst): a cluster DNS Service goes there. */
  dnsIP: string;
  /** The API server as nodes and pods reach it: what a kubeconfig read by a pod must name. */
  server: string;
  kubeconfig: string;
  logs: string;
}

/** An OCI archive imported into every node's containerd under ref. */
export interface NodeImage {
  archive: string;
  ref: string;
}

export interface NodeOptions {
  images: NodeImage[];
  /** The pause image's ref, one of images. */
  sandboxImage: string;
}

/** What a test needs to reach the environment; serialisable, passed to jest workers. */
export interface TestEnvInfo {
  pid: number;
  control: string;
  dir: string;
  clusters: TestEnvCluster[];
}

export interface StartOptions {
  workloadClusters?: string[];
  /** Milliseconds to wait for every API server (and node) to be ready. */
  timeoutMs?: number;
  /** Gives every cluster a node and a controller-manager and scheduler (needs root). */
  nodes?: NodeOptions;
  /** Every API server logs each write to DIR/CLUSTER/audit.log (auditedWrites reads it). */
  auditWrites?: boolean;
  /** kube-apiserver flags (--name=value) given to every API server after the test environment's own. */
  apiserverArgs?: string[];
  /** Environment of the test environment's process added to ours (e.g. GOGC). */
  env?: Record<string, string>;
  /** Run Cluster API's controller manager and install its CRDs in the management cluster (default true). */
  clusterApi?: boolean;
}

export class TestEnv {
  private constructor(
    readonly info: TestEnvInfo,
    private readonly child: ChildProcess,
    private readonly ownsDir: boolean,
  ) {}

  static async start(opts: StartOptions = {}): Promise<TestEnv> {
    const workloads = opts.workloadClusters ?? ['cluster-a', 'cluster-b'];
    const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-testenv-'));
    const logPath = path.join(dir, 'testenv.log');
    const log = openSync(logPath, 'a');
    const args = [
      '--dir',
      dir,
      '--workload-clusters',
      workloads.join(','),
      ...(opts.clusterApi === false ? [] : ['--cluster-api', clusterApiManifests()]),
    ];
    if (opts.auditWrites) args.push('--audit-writes');
    for (const arg of opts.apiserverArgs ?? []) args.push(`--apiserver-arg=${arg}`);
    if (opts.nodes) {
      args.push('--nodes', '--sandbox-image', opts.nodes.sandboxImage);
      for (const image of opts.nodes.images) args.push('--node-image', `${image.archive}=${image.ref}`);
    }
    const child = spawn(binPath('testenv'), args, {
      stdio: ['ignore', 'pipe', log],
      env: opts.env ? { ...process.env, ...opts.env } : undefined,
    });
    closeSync(log);
    try {
      const ready = await readReadyLine(child, opts.timeoutMs ?? 180_000);
      const info: TestEnvInfo = {
        pid: child.pid ?? -1,
        control: ready.control,
        dir,
        clusters: ready.clusters,
      };
      return new TestEnv(info, child, true);
    } catch (err) {
      child.kill('SIGKILL');
      const lines = readFileSync(logPath, 'utf8').split('\n');
      // The API servers' own klog lines (one a second each, of 40 clusters) can fill any tail: the
      // test environment's own lines ("2006/01/02 15:04:05 ...", its log.Fatalf among them) are shown apart.
      const own = lines.filter((l) => /^\d{4}\/\d\d\/\d\d /.test(l)).slice(-15);
      rmSync(dir, { recursive: true, force: true });
      throw new Error(
        `${(err as Error).message}\n--- the test environment's own last lines ---\n${own.join('\n')}\n--- last lines of its whole log ---\n${lines.slice(-15).join('\n')}`,
      );
    }
  }

  cluster(name: string): TestEnvCluster {
    return clusterOf(this.info, name);
  }

  kubeConfig(name: string): KubeConfig {
    return kubeConfigOf(this.info, name);
  }

  /** The cluster's node; throws if the environment has no nodes. */
  node(name: string): TestEnvNode {
    const node = this.cluster(name).node;
    if (!node) throw new Error(`cluster ${name} has no node: start the test environment with nodes`);
    return node;
  }

  async stop(): Promise<void> {
    // Stopping nodes kills their containers and removes mounts, namespaces
    // and cgroups: give it time before SIGKILL.
    await stopChild(this.child, 60_000);
    if (this.ownsDir) rmSync(this.info.dir, { recursive: true, force: true });
  }
}

export function clusterOf(info: TestEnvInfo, name: string): TestEnvCluster {
  const c = info.clusters.find((x) => x.name === name);
  if (!c)
    throw new Error(
      `test environment has no cluster "${name}" (has ${info.clusters.map((x) => x.name).join(', ')})`,
    );
  return c;
}

export function kubeConfigOf(info: TestEnvInfo, name: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(clusterOf(info, name).kubeconfig);
  return kc;
}

/** Stops one cluster's API server (its port then refuses connections); etcd keeps its data. */
export async function stopCluster(info: TestEnvInfo, name: string): Promise<void> {
  await control(info, 'stop', name);
}

/** Starts a stopped cluster's API server again on the same port with the same credentials. */
export async function startCluster(info: TestEnvInfo, name: string): Promise<void> {
  await control(info, 'start', name);
}

async function control(info: TestEnvInfo, action: 'stop' | 'start', name: string): Promise<void> {
  const res = await fetch(`${info.control}/${action}?cluster=${encodeURIComponent(name)}`, {
    method: 'POST',
  });
  if (!res.ok) throw new Error(`test environment: ${action} ${name}: ${res.status} ${await res.text()}`);
}

interface ReadyLine {
  ready: boolean;
  control: string;
  clusters: TestEnvCluster[];
}

function readReadyLine(child: ChildProcess, timeoutMs: number): Promise<ReadyLine> {
  return new Promise((resolve, reject) => {
    if (!child.stdout) return reject(new Error('test environment: no stdout'));
    const lines = readline.createInterface({ input: child.stdout });
    const fail = (why: string) => {
      clearTimeout(timer);
      lines.close();
      reject(new Error(`test environment: ${why}`));
    };
    const timer = setTimeout(() => fail(`not ready after ${timeoutMs} ms`), timeoutMs);
    child.once('exit', (code, signal) => fail(`exited early (code ${code}, signal ${signal})`));
    child.once('error', (err) => fail(`could not start: ${err.message}`));
    lines.on('line', (line) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        return; // not the ready line
      }
      const ready = parsed as ReadyLine;
      if (ready.ready) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve(ready);
      }
    });
  });
}
