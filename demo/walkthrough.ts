// The walkthrough of examples/README.md, run for real on one machine: a
// management and two workload API servers, the operator, a dns-server and a
// CoreDNS per workload cluster, kuard behind cluster-a's LoadBalancer address,
// and curl by generated name from "a pod in cluster-b". The demo (main.ts) and
// the end-to-end test drive this same class.
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { TestEnv } from '../test/support/testenv.js';
import { installCrds, readManifests, eventually } from '../test/support/kube.js';
import { registerWorkloadCluster } from '../test/support/capi.js';
import { binPath, repoRoot } from '../test/support/paths.js';
import { soaSerial } from '../test/support/secondaries.js';
import {
  DEFAULT_RECORDS_NAMESPACE,
  DEFAULT_ZONE,
  DNS_SERVER_SERVICE,
  FORWARD_ADDRESS_ANNOTATION,
} from '../api/index.js';
import { DNS_SERVER_NODE_FLAGS } from '../scripts/images/dns-server-node-flags.js';
import { ProcessGroup, tail, waitForHttp, type ManagedProcess } from './processes.js';
import { initialCorefile, startCoreDns, type CoreDnsProcess } from './coredns.js';
import { startKuard, type Kuard } from './kuard.js';
import { applyFailoverPolicy } from './failover.js';
import {
  applyOutsideZone,
  createTsigSecret,
  exposeDnsServer,
  OUTSIDE_TSIG_SECRET,
  startOutsideResolver,
  startOutsideSecondary,
} from './outside.js';
import { Kubectl } from './kubectl.js';
import { PodNetwork } from './pod.js';
import { StepRunner, type Progress } from './steps.js';

export const MANAGEMENT = 'management';
export const NAMESPACE = 'dev-team';
export const CLUSTERS = ['cluster-a', 'cluster-b'] as const;
/** --failover: kuard in cluster-c too, the second tier. */
export const FAILOVER_CLUSTERS = ['cluster-a', 'cluster-b', 'cluster-c'] as const;
export const KUARD_NAME = `kuard.gateway.cluster-a.${NAMESPACE}.clusters.${DEFAULT_ZONE}`;
/** The cluster-independent name: the traffic policy decides which cluster's kuard it answers. */
export const KUARD_SHARED_NAME = `kuard.gateway.${NAMESPACE}.clusters.${DEFAULT_ZONE}`;

/** Loopback addresses of one run; the demo and the e2e test use different ones so both can run at once. */
export interface Addresses {
  operatorHealth: string;
  kuard: string;
  /** --failover: cluster-c's kuard. */
  kuardC: string;
  coreDns: Record<string, string>;
  dnsServer: Record<string, string>;
  /** --outside: the resolver on the host, outside every cluster (unbound, port 53). */
  outsideResolver: string;
  /** --outside: the company's DNS on the host, a secondary of the zone (NSD, port 53). */
  outsideSecondary: string;
}

export function addressesFor(prefix: string): Addresses {
  return {
    operatorHealth: `${prefix}.1:8081`,
    kuard: `${prefix}.50`,
    kuardC: `${prefix}.53`,
    coreDns: { 'cluster-a': `${prefix}.11`, 'cluster-b': `${prefix}.12`, 'cluster-c': `${prefix}.13` },
    dnsServer: { 'cluster-a': `${prefix}.21`, 'cluster-b': `${prefix}.22`, 'cluster-c': `${prefix}.23` },
    outsideResolver: `${prefix}.60`,
    outsideSecondary: `${prefix}.61`,
  };
}

export interface WalkthroughOptions {
  addresses: Addresses;
  progress?: Progress;
  /** On a failed step keep the logs for the user (the demo); tests put the logs' tails in the error instead. */
  keepLogsOnFailure?: boolean;
  /**
   * Then the failover walkthrough (examples/README.md "Failover between clusters"): kuard in
   * cluster-c too, tiers cluster-a then cluster-c, cluster-a's kuard stopped and started again.
   */
  failover?: boolean;
  /**
   * The zone beyond the fleet (examples/README.md "The zone beyond the fleet"): the dns-servers
   * exposed, a DNSZone with spec.nameservers.expose and spec.transfer, an NSD secondary on the host
   * (the company's DNS) and an unbound asking it, curl from the host; with failover, the failover
   * seen from the host too.
   */
  outside?: boolean;
}

/** What the failover steps measured: from kuard stopped (started) to cluster-b's curl answered by the other. */
export interface FailoverTimes {
  failoverMs: number;
  recoveryMs: number;
  /** --outside: the same, for the curl from the host through the outside resolver. */
  outsideFailoverMs?: number;
  outsideRecoveryMs?: number;
}

interface WorkloadParts {
  kc: KubeConfig;
  kubectl: Kubectl;
  coreDns: CoreDnsProcess;
  dnsServer: ManagedProcess;
  pod: PodNetwork;
}

export class Walkthrough {
  readonly dir: string;
  readonly logDir: string;
  readonly processes: ProcessGroup;
  env?: TestEnv;
  operator?: ManagedProcess;
  kuard?: Kuard;
  kuardC?: Kuard;
  failoverTimes?: FailoverTimes;
  /** --outside: the host, its resolver the unbound outside every cluster. */
  outsideHost?: PodNetwork;
  readonly clusters: readonly string[];
  readonly workloads = new Map<string, WorkloadParts>();
  private readonly coreDnsProcesses: CoreDnsProcess[] = [];
  private management?: Kubectl;
  private readonly steps: StepRunner;

  private constructor(readonly opts: WalkthroughOptions) {
    this.dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-walkthrough-'));
    this.logDir = path.join(this.dir, 'logs');
    mkdirSync(this.logDir);
    this.processes = new ProcessGroup(this.logDir);
    this.clusters = opts.failover ? FAILOVER_CLUSTERS : CLUSTERS;
    this.steps = new StepRunner(
      Walkthrough.STEPS +
        (opts.failover ? Walkthrough.FAILOVER_STEPS : 0) +
        (opts.outside ? Walkthrough.OUTSIDE_STEPS : 0),
      this.logDir,
      opts.progress,
    );
  }

  static readonly STEPS = 8;
  static readonly FAILOVER_STEPS = 4;
  static readonly OUTSIDE_STEPS = 4;

  /** Runs every step; on failure stops what it started and throws a StepError. */
  static async run(opts: WalkthroughOptions): Promise<Walkthrough> {
    const w = new Walkthrough(opts);
    try {
      await w.runSteps();
      return w;
    } catch (err) {
      const keepLogs = opts.keepLogsOnFailure ?? true;
      if (!keepLogs && err instanceof Error) err.message += `\n${logTails(w.logDir)}`;
      await w.stop({ keepLogs });
      throw err;
    }
  }

  private step<T>(title: string, fn: () => Promise<T>): Promise<T> {
    return this.steps.run(title, fn);
  }

  private async runSteps(): Promise<void> {
    const root = repoRoot();
    const a = this.opts.addresses;

    const clusters = this.clusters;
    const named = `${clusters.slice(0, -1).join(', ')} and ${clusters.at(-1)}`;
    const env = await this.step(
      `Start the management cluster (with Cluster API v1.14 controllers), ${named} (etcd + kube-apiservers)`,
      () => TestEnv.start({ workloadClusters: [...clusters] }),
    );
    this.env = env;
    const management = new Kubectl(binPath('kubectl'), env.cluster(MANAGEMENT).kubeconfig);
    this.management = management;

    await this.step(
      `Register ${named} with Cluster API as a provider does: v1beta2 Clusters in dev-team, their provider objects provisioned, their kubeconfig Secrets`,
      async () => {
        await installCrds(env.kubeConfig(MANAGEMENT), readManifests(path.join(root, 'test', 'fixtures')));
        for (const cluster of clusters)
          await registerWorkloadCluster(env.kubeConfig(MANAGEMENT), {
            namespace: NAMESPACE,
            cluster,
            kubeconfigPath: env.cluster(cluster).kubeconfig,
          });
      },
    );

    await this.step('Install capi-dns on the management cluster and start the operator', async () => {
      await management.run(['apply', '--server-side', '-k', path.join(root, 'config', 'default')]);
      this.operator = this.startOperator();
      await waitForHttp(`http://${a.operatorHealth}/healthz`, this.operator);
    });

    await this.step('Install the dns-server and CoreDNS in each workload cluster', async () => {
      for (const cluster of clusters) await this.installWorkload(cluster);
    });

    await this.step('Deploy kuard behind a LoadBalancer Service in cluster-a', async () => {
      const kubectl = this.workload('cluster-a').kubectl;
      await kubectl.run(['apply', '-f', path.join(root, 'examples', 'kuard.yaml')]);
      this.kuard = await startKuard(a.kuard, 'cluster-a');
      await this.setLoadBalancerAddress('cluster-a', a.kuard);
    });

    await this.step('Label the Clusters hasContour=true and apply the GatewayDNS', async () => {
      for (const cluster of clusters)
        await management.run([
          '-n',
          NAMESPACE,
          'label',
          'cluster',
          cluster,
          'hasContour=true',
          '--overwrite',
        ]);
      await management.run(['apply', '-f', path.join(root, 'examples', 'dev-team-gateway-dns.yaml')]);
    });

    await this.step('Wait for the GatewayDNS to be Ready', () =>
      eventually(
        () =>
          management.run([
            '-n',
            NAMESPACE,
            'wait',
            '--for=condition=Ready',
            '--timeout=2s',
            'gatewaydns/dev-team-gateway-dns',
          ]),
        30_000,
        200,
      ),
    );

    await this.step(`curl http://${KUARD_NAME} from a pod in cluster-b`, () =>
      eventually(() => this.workload('cluster-b').pod.curl(`http://${KUARD_NAME}`), 30_000, 250),
    );
    if (this.opts.outside) await this.outsideSteps();
    if (this.opts.failover) await this.failoverSteps();
  }

  /** examples/README.md "The zone beyond the fleet", as a user runs it. */
  private async outsideSteps(): Promise<void> {
    const a = this.opts.addresses;
    const management = this.managementKubectl();
    await this.step(
      "Expose each cluster's dns-server (config/dns-server-exposed), its load balancer's address set as a cloud's controller would",
      async () => {
        for (const cluster of this.clusters) {
          const w = this.workload(cluster);
          await exposeDnsServer(w.kubectl, w.kc, a.dnsServer[cluster]!);
        }
      },
    );
    const dir = path.join(this.dir, 'outside');
    mkdirSync(dir, { recursive: true });
    const { namespace, name } = OUTSIDE_TSIG_SECRET;
    const { zone, key } = await this.step(
      `Create the TSIG Secret ${namespace}/${name} (a key as tsig-keygen makes it) and apply examples/dnszone-outside.yaml: every exposed dns-server an NS of xcc.test, with glue (status.parentRecords), sending NOTIFY to the secondary on ${a.outsideSecondary} and letting it transfer the zone`,
      async () => {
        const key = await createTsigSecret(management, dir);
        const zone = await applyOutsideZone(management, this.clusters.length, a.outsideSecondary, dir);
        return { zone, key };
      },
    );
    await this.step(
      `Start NSD on ${a.outsideSecondary}, the company's DNS outside every cluster: a secondary of xcc.test, taking it with TSIG from the exposed dns-servers, at the serial status.nameservers shows`,
      async () => {
        const { nsd } = await startOutsideSecondary(this.processes, dir, a.outsideSecondary, zone, key);
        // What the secondary holds is what the clusters say they serve (the highest: RFC 1996).
        await eventually(
          async () => {
            const z = JSON.parse(
              await management.run(['get', 'dnszone', zone.metadata.name, '-o', 'json']),
            ) as typeof zone;
            const serials = (z.status?.nameservers ?? []).map((n) => n.serial);
            if (serials.length !== this.clusters.length || serials.some((s) => s === undefined))
              throw new Error(`status.nameservers serials: ${JSON.stringify(serials)}`);
            const newest = Math.max(...(serials as number[]));
            const held = await soaSerial(a.outsideSecondary, 53, DEFAULT_ZONE);
            if (held === undefined || held < newest)
              throw new Error(`NSD holds serial ${held}, the clusters serve up to ${newest}`);
          },
          30_000,
          250,
        ).catch((err: unknown) => {
          throw new Error(`${(err as Error).message}
--- nsd ---
${tail(nsd.logPath, 15)}`);
        });
      },
    );
    await this.step(
      `Start unbound on ${a.outsideResolver}, the company's resolver outside every cluster, asking the NSD secondary for xcc.test; curl http://${KUARD_NAME} from the host through it`,
      async () => {
        const { unbound, host } = startOutsideResolver(
          this.processes,
          dir,
          a.outsideResolver,
          a.outsideSecondary,
        );
        this.outsideHost = host;
        await eventually(() => host.curl(`http://${KUARD_NAME}`), 30_000, 250).catch((err: unknown) => {
          throw new Error(`${(err as Error).message}
--- unbound ---
${tail(unbound.logPath, 15)}`);
        });
      },
    );
  }

  /** examples/README.md "Failover between clusters", as a user runs it. */
  private async failoverSteps(): Promise<void> {
    const root = repoRoot();
    const a = this.opts.addresses;
    const management = this.managementKubectl();
    const shared = `http://${KUARD_SHARED_NAME}`;
    const pod = this.workload('cluster-b').pod;
    const answeredBy = (cluster: string, timeoutMs: number, from: PodNetwork = pod) =>
      eventually(
        async () => {
          const out = await from.curl(shared);
          if (!out.includes(`hello from ${cluster} `)) throw new Error(`answered by another kuard: ${out}`);
          return out;
        },
        timeoutMs,
        100,
      );
    await this.step(
      'Deploy kuard in cluster-c too; label cluster-a region=eu and cluster-c region=us; apply examples/gateway-dns-failover.yaml (tiers cluster-a then cluster-c, HTTP checks every 2 s from every cluster)',
      async () => {
        await this.workload('cluster-c').kubectl.run([
          'apply',
          '-f',
          path.join(root, 'examples', 'kuard.yaml'),
        ]);
        this.kuardC = await startKuard(a.kuardC, 'cluster-c');
        await this.setLoadBalancerAddress('cluster-c', a.kuardC);
        await applyFailoverPolicy(management, NAMESPACE);
      },
    );
    await this.step(`curl ${shared} from a pod in cluster-b: cluster-a's kuard answers`, () =>
      answeredBy('cluster-a', 30_000),
    );
    await this.step(
      "Stop cluster-a's kuard (its Kubernetes objects unchanged): the same curl answers from cluster-c",
      async () => {
        await this.kuard?.close();
        this.kuard = undefined;
        const began = Date.now();
        const outside = this.outsideHost;
        // --outside: the host, through the unbound outside every cluster, sees it too (TTL 5 s).
        const [failoverMs, outsideFailoverMs] = await Promise.all([
          answeredBy('cluster-c', 30_000).then(() => Date.now() - began),
          outside ? answeredBy('cluster-c', 30_000, outside).then(() => Date.now() - began) : undefined,
        ]);
        this.failoverTimes = { failoverMs, recoveryMs: 0, ...(outside ? { outsideFailoverMs } : {}) };
      },
    );
    await this.step("Start cluster-a's kuard again: the curl answers from cluster-a again", async () => {
      this.kuard = await startKuard(a.kuard, 'cluster-a');
      const began = Date.now();
      const outside = this.outsideHost;
      const [recoveryMs, outsideRecoveryMs] = await Promise.all([
        answeredBy('cluster-a', 30_000).then(() => Date.now() - began),
        outside ? answeredBy('cluster-a', 30_000, outside).then(() => Date.now() - began) : undefined,
      ]);
      this.failoverTimes = {
        ...this.failoverTimes,
        failoverMs: this.failoverTimes?.failoverMs ?? 0,
        recoveryMs,
        ...(outside ? { outsideRecoveryMs } : {}),
      };
    });
  }

  workload(cluster: string): WorkloadParts {
    const w = this.workloads.get(cluster);
    if (!w) throw new Error(`walkthrough: no workload cluster ${cluster}`);
    return w;
  }

  managementKubectl(): Kubectl {
    if (!this.management) throw new Error('walkthrough: not started');
    return this.management;
  }

  private requireEnv(): TestEnv {
    if (!this.env) throw new Error('walkthrough: the test environment is not running');
    return this.env;
  }

  startOperator(): ManagedProcess {
    const env = this.requireEnv();
    return this.processes.start('operator', process.execPath, [
      path.join(repoRoot(), 'dist', 'operator', 'main.js'),
      '--kubeconfig',
      env.cluster(MANAGEMENT).kubeconfig,
      '--domain-suffix',
      DEFAULT_ZONE,
      '--records-namespace',
      DEFAULT_RECORDS_NAMESPACE,
      '--health-listen',
      this.opts.addresses.operatorHealth,
    ]);
  }

  async restartOperator(): Promise<void> {
    if (this.operator) await this.processes.stop(this.operator);
    this.operator = this.startOperator();
    await waitForHttp(`http://${this.opts.addresses.operatorHealth}/healthz`, this.operator);
  }

  private async installWorkload(cluster: string): Promise<void> {
    const env = this.requireEnv();
    const root = repoRoot();
    const a = this.opts.addresses;
    const coreDnsAddress = a.coreDns[cluster];
    const dnsServerAddress = a.dnsServer[cluster];
    if (!coreDnsAddress || !dnsServerAddress) throw new Error(`no addresses planned for ${cluster}`);
    const kubeconfig = env.cluster(cluster).kubeconfig;
    const kc = env.kubeConfig(cluster);
    const kubectl = new Kubectl(binPath('kubectl'), kubeconfig);
    const dir = path.join(this.dir, cluster);
    mkdirSync(dir, { recursive: true });

    const coreDns = await startCoreDns(this.processes, {
      cluster,
      kc,
      dir,
      corefile: initialCorefile(coreDnsAddress, kubeconfig),
      binary: binPath('coredns'),
    });
    // Known to stop() from here on, even if a later part of this step fails.
    this.coreDnsProcesses.push(coreDns);
    await kubectl.run(['apply', '--server-side', '-k', path.join(root, 'config', 'workload')]);
    await kubectl.run([
      '-n',
      DEFAULT_RECORDS_NAMESPACE,
      'annotate',
      '--overwrite',
      'service',
      DNS_SERVER_SERVICE,
      `${FORWARD_ADDRESS_ANNOTATION}=${dnsServerAddress}:53`,
    ]);
    const healthPort = 8080;
    const dnsServer = this.processes.start(`dns-server-${cluster}`, process.execPath, [
      ...DNS_SERVER_NODE_FLAGS,
      path.join(root, 'dist', 'dns-server', 'main.js'),
      '--listen',
      `${dnsServerAddress}:53`,
      '--zone',
      DEFAULT_ZONE,
      '--kubeconfig',
      kubeconfig,
      '--namespace',
      DEFAULT_RECORDS_NAMESPACE,
      '--health-listen',
      `${dnsServerAddress}:${healthPort}`,
      // A local process with no kube-proxy in front: Ctrl-C stops it at once.
      '--lameduck',
      '0s',
      // Its probe report (--failover's health checks) for the GatewayDNS status, named as a Pod's would be.
      '--pod-name',
      `capi-dns-server-${cluster}`,
    ]);
    await waitForHttp(`http://${dnsServerAddress}:${healthPort}/readyz`, dnsServer);
    await waitForHttp(`http://${dnsServerAddress}:${healthPort}/healthz`, dnsServer);
    this.workloads.set(cluster, {
      kc,
      kubectl,
      coreDns,
      dnsServer,
      pod: new PodNetwork(dir, coreDnsAddress),
    });
  }

  /** Sets a Service's LoadBalancer ingress through the status subresource, as a cloud controller does. */
  async setLoadBalancerAddress(
    cluster: string,
    ...ingress: ({ ip: string } | { hostname: string } | string)[]
  ): Promise<void> {
    const api = this.workload(cluster).kc.makeApiClient(CoreV1Api);
    const entries = ingress.map((x) => (typeof x === 'string' ? { ip: x } : x));
    await api.patchNamespacedServiceStatus(
      {
        name: 'envoy',
        namespace: 'projectcontour',
        body: { status: { loadBalancer: { ingress: entries } } },
      },
      // client-node 1.x sends JSON Patch unless told otherwise per call.
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  /** Stops every process and the test environment; removes the files unless asked to keep the logs. */
  async stop(opts: { keepLogs?: boolean } = {}): Promise<void> {
    for (const c of this.coreDnsProcesses)
      await c
        .stop()
        .catch((err: unknown) => process.stderr.write(`walkthrough: stopping CoreDNS: ${String(err)}\n`));
    await this.processes.stopAll();
    await this.kuard?.close();
    await this.kuardC?.close();
    await this.env?.stop();
    if (!opts.keepLogs) rmSync(this.dir, { recursive: true, force: true });
  }
}

function logTails(logDir: string): string {
  return readdirSync(logDir)
    .map((f) => `--- ${f} (last lines) ---\n${tail(path.join(logDir, f), 15)}`)
    .join('\n');
}
