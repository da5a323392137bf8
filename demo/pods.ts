// The walkthrough with real pods (`npm run demo -- --pods`; the e2e test
// test/e2e/real-pods.test.ts runs the same steps): every cluster has a real
// node (testenv --nodes), and the commands of examples/README.md run as a
// user types them: `kubectl apply -k config/default` and `config/workload`
// (a kustomize `images:` overlay points them at the images of `npm run
// images`, loaded on every node), CoreDNS as kubeadm runs it, whose ConfigMap
// the operator patches, kuard from examples/ with the envoy LoadBalancer
// status a cloud controller would write (an address cluster-a's kube-proxy
// sends to the kuard pod), the GatewayDNS from examples/, and `kubectl run …
// curl` in cluster-b. Needs root.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { registerWorkloadCluster } from '../test/support/capi.js';
import { buildImages, type BuiltImage, type ImageName } from '../test/support/images.js';
import { eventually, installCrds, readManifests } from '../test/support/kube.js';
import { imageRef, requireRootForNodes, startWithNodes } from '../test/support/nodes.js';
import { binPath, repoRoot } from '../test/support/paths.js';
import type { TestEnv } from '../test/support/testenv.js';
import { Kubectl } from './kubectl.js';
import { applyFailoverPolicy } from './failover.js';
import { writeOverlay } from './overlay.js';
import { installCoreDns, installDnsServers, installOperator, type NodeInstall } from './install.js';
import { collectPodLogs } from './pod-logs.js';
import { StepRunner, type Progress } from './steps.js';
import {
  CLUSTERS,
  FAILOVER_CLUSTERS,
  KUARD_NAME,
  KUARD_SHARED_NAME,
  MANAGEMENT,
  NAMESPACE,
  type FailoverTimes,
} from './walkthrough.js';

/** One step of the walkthrough: the demo prints its title, the e2e test names a test after it. */
export interface PodStep {
  title: string;
  run(w: PodWalkthrough): Promise<void>;
}

export interface PodWalkthroughOptions {
  progress?: Progress;
  /** Aborting (Ctrl-C) stops everything; the step under way then fails and no further one starts. */
  signal?: AbortSignal;
  /** On a failed step collect the nodes', pods' and API servers' logs and keep them (the demo). */
  keepLogsOnFailure?: boolean;
  /** Then failover between clusters (examples/README.md): cluster-c with kuard too, the second tier. */
  failover?: boolean;
}

const WAIT = '--timeout=120s';

export class PodWalkthrough {
  static readonly steps: readonly PodStep[] = [
    {
      title: 'Build the images (npm run images): controller, dns-server, CoreDNS, kuard, curl, pause',
      run: (w) => w.buildImages(),
    },
    {
      title:
        'Start the management cluster (with Cluster API v1.14 controllers), cluster-a and cluster-b (and cluster-c with --failover), each with a node (containerd, kubelet, kube-proxy) and a controller-manager and scheduler',
      run: (w) => w.startClusters(),
    },
    {
      title: 'Run CoreDNS in each workload cluster as kubeadm does (Deployment, kube-dns Service, ConfigMap)',
      run: (w) => w.installCoreDns(),
    },
    {
      title:
        'Register the workload clusters with Cluster API as a provider does: v1beta2 Clusters in dev-team, their provider objects provisioned, their kubeconfig Secrets',
      run: (w) => w.registerClusters(),
    },
    {
      title:
        'kubectl apply -k config/default on the management cluster; the operator Deployment is Available',
      run: (w) => w.installOperator(),
    },
    {
      title:
        'The workload side by ClusterResourceSet (config/clusterresourceset) in dev-team, the Clusters labelled capi-dns.io/workload=enabled: Cluster API installs it; the dns-server Deployments are Available',
      run: (w) => w.installDnsServers(),
    },
    {
      title: "Deploy kuard (examples/kuard.yaml) in cluster-a; set the envoy Service's LoadBalancer address",
      run: (w) => w.deployKuard(),
    },
    {
      title:
        'Label the Clusters hasContour=true, apply the GatewayDNS; it is Ready and every Corefile forwards the zone',
      run: (w) => w.applyGatewayDns(),
    },
    {
      title: `kubectl run kuard-test … -- curl http://${KUARD_NAME} in cluster-b (kubelet refreshes CoreDNS's Corefile within a minute)`,
      run: (w) => w.firstCurl(),
    },
  ];

  /** After the walkthrough with --failover: examples/README.md "Failover between clusters". */
  static readonly failoverSteps: readonly PodStep[] = [
    {
      title:
        'Deploy kuard in cluster-c too; label cluster-a region=eu and cluster-c region=us; apply examples/gateway-dns-failover.yaml (tiers cluster-a then cluster-c, HTTP checks every 2 s from every cluster)',
      run: (w) => w.applyFailover(),
    },
    {
      title: `kubectl run … -- curl http://${KUARD_SHARED_NAME} in cluster-b: cluster-a's kuard answers`,
      run: (w) => w.sharedAnsweredBy('cluster-a').then(() => undefined),
    },
    {
      title:
        "kubectl -n projectcontour scale deployment kuard --replicas=0 in cluster-a: the same curl answers from cluster-c's kuard",
      run: async (w) => {
        const began = Date.now();
        await w.scaleKuard('cluster-a', 0);
        await w.sharedAnsweredBy('cluster-c');
        w.failoverTimes = { failoverMs: Date.now() - began, recoveryMs: 0 };
      },
    },
    {
      title: "Scale cluster-a's kuard back to 1: the curl answers from cluster-a's again",
      run: async (w) => {
        const began = Date.now();
        await w.scaleKuard('cluster-a', 1);
        await w.sharedAnsweredBy('cluster-a');
        w.failoverTimes = { failoverMs: w.failoverTimes?.failoverMs ?? 0, recoveryMs: Date.now() - began };
      },
    },
  ];

  readonly dir: string;
  readonly logDir: string;
  readonly clusters: readonly string[];
  failoverTimes?: FailoverTimes;
  env?: TestEnv;
  images?: Map<string, BuiltImage>;
  /** How long the first curl took to be answered after its first try, in ms. */
  firstCurlMs?: number;
  private readonly runner: StepRunner;

  constructor(readonly opts: PodWalkthroughOptions = {}) {
    this.dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-pods-'));
    this.logDir = path.join(this.dir, 'logs');
    mkdirSync(this.logDir);
    this.clusters = opts.failover ? FAILOVER_CLUSTERS : CLUSTERS;
    this.runner = new StepRunner(this.stepsToRun().length, this.logDir, opts.progress, opts.signal);
    // Stopping the environment makes whatever a step awaits fail at once.
    opts.signal?.addEventListener('abort', () => void this.stop(), { once: true });
  }

  /** Runs every step; on failure (or Ctrl-C) stops everything and throws a StepError (or Interrupted). */
  static async run(opts: PodWalkthroughOptions = {}): Promise<PodWalkthrough> {
    const w = new PodWalkthrough(opts);
    try {
      for (const step of w.stepsToRun()) await w.runner.run(step.title, () => step.run(w));
      return w;
    } catch (err) {
      const keepLogs = (opts.keepLogsOnFailure ?? false) && !opts.signal?.aborted;
      if (keepLogs && w.env) await collectPodLogs(w.env, w.logDir, (c) => w.kubectl(c));
      await w.stop({ keepLogs });
      throw err;
    }
  }

  stepsToRun(): readonly PodStep[] {
    return this.opts.failover
      ? [...PodWalkthrough.steps, ...PodWalkthrough.failoverSteps]
      : PodWalkthrough.steps;
  }

  async applyFailover(): Promise<void> {
    await this.deployKuard('cluster-c');
    await applyFailoverPolicy(this.kubectl(MANAGEMENT), NAMESPACE);
  }

  async scaleKuard(cluster: string, replicas: number): Promise<void> {
    await this.kubectl(cluster).run([
      '-n',
      'projectcontour',
      'scale',
      'deployment/kuard',
      `--replicas=${replicas}`,
    ]);
  }

  /**
   * Until a pod of cluster-b curls kuard by the cluster-independent name and reaches `cluster`'s
   * LoadBalancer address (curl's remote_ip: every kuard pod says the same but its name).
   */
  async sharedAnsweredBy(cluster: string, timeoutMs = 90_000): Promise<string> {
    const want = this.kuardAddress(cluster);
    let n = 0;
    return eventually(
      async () => {
        const pod = `kuard-shared-${n++}`;
        const out = await this.curlInClusterB(pod, `http://${KUARD_SHARED_NAME}`, [
          '-sS',
          '--max-time',
          '5',
          '-w',
          '\\nremote %{remote_ip}\\n',
        ]);
        if (!out.includes('kuard: hello from') || !out.includes(`remote ${want}`))
          throw new Error(`not answered by ${cluster}'s kuard (${want}): ${out}`);
        return out;
      },
      timeoutMs,
      500,
    );
  }

  requireEnv(): TestEnv {
    if (!this.env) throw new Error('pod walkthrough: the test environment is not running');
    return this.env;
  }

  kubectl(cluster: string): Kubectl {
    return new Kubectl(binPath('kubectl'), this.requireEnv().cluster(cluster).kubeconfig);
  }

  ref(name: ImageName): string {
    if (!this.images) throw new Error('pod walkthrough: the images are not built yet');
    return imageRef(this.images, name);
  }

  async buildImages(): Promise<void> {
    requireRootForNodes();
    this.images = await buildImages();
  }

  async startClusters(): Promise<void> {
    if (!this.images) throw new Error('pod walkthrough: the images are not built yet');
    ({ env: this.env } = await startWithNodes([...this.clusters], this.images));
  }

  async installCoreDns(): Promise<void> {
    await installCoreDns(this.install(), this.clusters);
  }

  async registerClusters(): Promise<void> {
    const env = this.requireEnv();
    const management = env.kubeConfig(MANAGEMENT);
    // The test environment's minimal infrastructure and control plane providers.
    await installCrds(management, readManifests(path.join(repoRoot(), 'test', 'fixtures')));
    for (const cluster of this.clusters)
      await registerWorkloadCluster(management, {
        namespace: NAMESPACE,
        cluster,
        // The operator's pods read this kubeconfig: it names the API server as pods reach it.
        kubeconfigPath: env.node(cluster).kubeconfig,
      });
  }

  async installOperator(): Promise<void> {
    await installOperator(this.install(), MANAGEMENT);
  }

  async installDnsServers(): Promise<void> {
    await installDnsServers(this.install(), MANAGEMENT, NAMESPACE, this.clusters);
  }

  /** What demo/install.ts needs of this walkthrough, once the images are built and the clusters run. */
  private install(): NodeInstall {
    if (!this.images) throw new Error('pod walkthrough: the images are not built yet');
    return {
      dir: this.dir,
      env: this.requireEnv(),
      images: this.images,
      kubectl: (c) => this.kubectl(c),
      wait: '120s',
    };
  }

  /** The LoadBalancer address of a cluster's envoy Service: every node routes it to that cluster's node. */
  kuardAddress(cluster = 'cluster-a'): string {
    return this.requireEnv()
      .node(cluster)
      .loadBalancerCIDR.replace(/0\/24$/, '10');
  }

  /** examples/kuard.yaml in a cluster (cluster-a in the walkthrough), on its LoadBalancer address. */
  async deployKuard(cluster = 'cluster-a'): Promise<void> {
    const a = this.kubectl(cluster);
    const folder = writeOverlay(this.dir, 'kuard', 'kuard.yaml', [
      ['gcr.io/kuar-demo/kuard-amd64', this.ref('kuard')],
    ]);
    writeFileSync(
      path.join(folder, 'kuard.yaml'),
      readFileSync(path.join(repoRoot(), 'examples', 'kuard.yaml')),
    );
    await a.run(['apply', '-k', folder]);
    await a.run(['-n', 'projectcontour', 'wait', 'deployment/kuard', '--for=condition=Available', WAIT]);
    // What a cloud controller writes; the cluster's kube-proxy sends the address to the kuard pod.
    await a.run([
      '-n',
      'projectcontour',
      'patch',
      'service',
      'envoy',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { loadBalancer: { ingress: [{ ip: this.kuardAddress(cluster) }] } } }),
    ]);
  }

  async applyGatewayDns(): Promise<void> {
    const management = this.kubectl(MANAGEMENT);
    await management.run([
      '-n',
      NAMESPACE,
      'label',
      'cluster',
      ...this.clusters,
      'hasContour=true',
      '--overwrite',
    ]);
    await management.run(['apply', '-f', path.join(repoRoot(), 'examples', 'dev-team-gateway-dns.yaml')]);
    await management.run([
      '-n',
      NAMESPACE,
      'wait',
      'gatewaydns/dev-team-gateway-dns',
      '--for=condition=Ready',
      '--timeout=60s',
    ]);
    for (const cluster of this.clusters)
      await eventually(
        async () => {
          if (!(await this.corefile(cluster)).includes('xcc.test:53'))
            throw new Error(`${cluster}: the operator has not patched the Corefile yet`);
        },
        30_000,
        500,
      );
  }

  /** kube-system/coredns's Corefile in a cluster. */
  corefile(cluster: string): Promise<string> {
    return this.kubectl(cluster).run([
      '-n',
      'kube-system',
      'get',
      'configmap',
      'coredns',
      '-o',
      'jsonpath={.data.Corefile}',
    ]);
  }

  async firstCurl(): Promise<void> {
    const began = Date.now();
    // kubelet updates a ConfigMap volume on its next sync of the pod (up to a
    // minute), and CoreDNS reloads the Corefile 2 s later.
    await eventually(() => this.curlFromClusterB('kuard-test'), 150_000, 2_000);
    this.firstCurlMs = Date.now() - began;
  }

  /** The README's curl as kubectl arguments: a pod of cluster-b that curls kuard by name. */
  curlArgs(pod: string, curlFlags = ['-sS', '--max-time', '5']): string[] {
    return [
      'run',
      pod,
      '-i',
      '--rm',
      `--image=${this.ref('curl')}`,
      '--restart=Never',
      '--',
      'curl',
      ...curlFlags,
      `http://${KUARD_NAME}`,
    ];
  }

  /** Curl in a pod of cluster-b, run to its end; what it printed (stdout and stderr), or why it failed. */
  async curlInClusterB(pod: string, url: string, curlFlags = ['-sS', '--max-time', '5']): Promise<string> {
    const { phase, log } = await this.kubectl('cluster-b').runToCompletion(pod, [
      `--image=${this.ref('curl')}`,
      '--',
      'curl',
      ...curlFlags,
      url,
    ]);
    if (phase !== 'Succeeded') throw new Error(`curl ${url} in cluster-b failed: ${log.trim()}`);
    return log;
  }

  /**
   * The README's curl in cluster-b (as a pod whose log is read: see Kubectl.runToCompletion); its
   * output, or an error unless kuard answered for the name.
   */
  async curlFromClusterB(pod: string, curlFlags?: string[]): Promise<string> {
    const out = await this.curlInClusterB(pod, `http://${KUARD_NAME}`, curlFlags);
    if (!out.includes('kuard: hello from') || !out.includes(`(${KUARD_NAME}/)`))
      throw new Error(`no answer from kuard: ${out}`);
    return out;
  }

  /** Stops the environment (its nodes: containers, mounts, network namespaces, links); keeps the logs if asked. */
  async stop(opts: { keepLogs?: boolean } = {}): Promise<void> {
    // Safe to call twice, also at once (Ctrl-C while a failed run stops): TestEnv.stop is.
    await this.env?.stop();
    if (!opts.keepLogs) rmSync(this.dir, { recursive: true, force: true });
  }
}
