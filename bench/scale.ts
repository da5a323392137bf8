// The operator's cost as the fleet grows (issue 21): N workload clusters (real API servers,
// test/testenv) in teams of --team-size clusters, each team a management namespace that is also a
// ClusterSet. Every cluster homes --services Services of every kind (LoadBalancer, ClusterIP,
// NodePort, headless), each named by a GatewayDNS that selects that cluster (all four resolution
// types, one in ten with spec.mirror, two in ten answering localFirst) and each exported with a
// ServiceExport; only the first team's clusters run a dns-server (the changes are made there).
// At each N, for every build (this one, --reference another, interleaved run by run), each as
// --replicas processes (more than one: active-active with --shards 16, figures summed over the
// replicas, the largest replica's memory shown beside):
//   - bare: the operator over the clusters with no object yet, settled: its resident memory;
//   - cold start: nothing written anywhere (no record set, mirror, ServiceImport, no status), the
//     operator starts; until every GatewayDNS and every ServiceExport is Ready; the requests it took
//     per cluster (as the API servers count them);
//   - at rest (--rest S): requests a minute per cluster beyond what the clusters make with no
//     operator, the operator's CPU a minute, resident memory, sockets and watches per cluster;
//   - per change: a LoadBalancer address of the first cluster changes (as a cloud controller writes
//     it); until every dns-server of the team answers it; p50/p99 over --changes; writes per change;
//   - a workload API server stopped and started again: until the GatewayDNS of a Service there says
//     Unreachable, then until it says Ready again and the first change after it is answered there.
// Then the fit over N: resident memory, cold start and requests against clusters and objects.
// --trim-apiservers (so that 100 clusters fit in 24 GiB): every API server serves only the API groups
// that the operator, the dns-servers, Cluster API and this bench use (TRIMMED_RUNTIME_CONFIG), and the
// test environment's Go runtime collects at GOGC=50. Neither changes what the operator sees: it never
// asks for a group turned off (it does no discovery beyond the groups it writes), and GOGC is the API
// servers' memory against their CPU, no API behaviour.
//
//   npm run build && node dist/bench/scale.js [--clusters 10,25,50] [--team-size 10] [--services 10]
//     [--changes 20] [--rest 60] [--runs 2] [--reference ../ref/dist] [--replicas 1,3] [--trim-apiservers]
//
// (the reference's dist must resolve node_modules: a worktree with node_modules linked in does)
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import {
  CLUSTERSET_LABEL,
  CONTROLLER_NAME,
  DNSRECORDSET_PLURAL,
  GATEWAYDNS_PLURAL,
  GROUP,
  GATEWAYDNS_KIND,
  MANAGED_BY_LABEL,
  MCS_API_VERSION,
  MCS_GROUP,
  MCS_VERSION,
  VERSION,
  API_VERSION,
  type ResolutionType,
} from '../api/index.js';
import { CLUSTER_API, ensureNamespace } from '../test/support/capi.js';
import { addressesAt as addresses, startDnsServer, type DnsProcess } from '../test/support/dns.js';
import { writeEndpointSlice } from '../test/support/endpointslices.js';
import { apply, eventually, installCrds, readManifests, startRestarting } from '../test/support/kube.js';
import { metricsAt, setLoadBalancer, startOperator, type OperatorProcess } from '../test/support/operator.js';
import { repoRoot } from '../test/support/paths.js';
import { probeReadyz } from '../operator/manager/clusters/probe.js';
import { prepareClusters } from '../test/support/prepare.js';
import { startCluster, stopCluster, TestEnv } from '../test/support/testenv.js';
import {
  allRequests,
  difference,
  measureRest,
  OPERATOR_RESOURCES,
  watchesOpen,
  type AtRest,
} from './apiserver-requests.js';
import { reuseConnections } from '../runtime/kube-connections.js';
import { loadAverage, machine } from './dns-load.js';
import { summarizeHeapSnapshot } from './heap-summary.js';
import { cpuSeconds, memoryMb } from './proc.js';
import { percentile } from './rank.js';
import { sumMetric } from '../test/support/metrics.js';

const APPS = 'apps';
const MIRROR_NS = 'mirror';
const RECORDS_NS = 'capi-dns';
const MCS = { group: MCS_GROUP, version: MCS_VERSION };
const CLUSTER_LABEL = 'scale.capi-dns.test/cluster';

const { values } = parseArgs({
  options: {
    clusters: { type: 'string', default: '10,25,50' },
    'team-size': { type: 'string', default: '10' },
    services: { type: 'string', default: '10' },
    changes: { type: 'string', default: '20' },
    rest: { type: 'string', default: '60' },
    runs: { type: 'string', default: '2' },
    reference: { type: 'string' },
    // Operator replicas per build: "1,3" measures each build as one process and as three sharded ones.
    replicas: { type: 'string', default: '1' },
    // After each fleet's first run: a heap snapshot of the operator at rest, summarised by constructor.
    'heap-snapshot': { type: 'boolean', default: false },
    'trim-apiservers': { type: 'boolean', default: false },
  },
});
const teamSize = Number(values['team-size']);
const servicesPerCluster = Number(values.services);
const changeCount = Number(values.changes);
const restSeconds = Number(values.rest);

interface Build {
  name: string;
  dist: string;
  /** Operator processes; more than one run active-active (--shards). */
  replicas: number;
}
const SHARDS = 16;
/**
 * The API groups left on with --trim-apiservers: core, EndpointSlices, CRDs, Leases (sharding), RBAC
 * and the authentication and authorization reviews (the API servers' own), networking (the API
 * server's Service IP allocator needs it to start), flow control, webhooks and priority classes (its
 * own start hooks), events.k8s.io (Cluster API's recorder), storage.k8s.io and node.k8s.io (its own
 * admission plugins watch StorageClasses and RuntimeClasses: without them its /readyz fails for good,
 * which the operator's probe reads). Every API server must then answer /readyz (checked).
 */
const TRIMMED_RUNTIME_CONFIG = [
  'api/all=false',
  'api/v1=true',
  'discovery.k8s.io/v1=true',
  'apiextensions.k8s.io/v1=true',
  'apiregistration.k8s.io/v1=true',
  'coordination.k8s.io/v1=true',
  'rbac.authorization.k8s.io/v1=true',
  'authentication.k8s.io/v1=true',
  'authorization.k8s.io/v1=true',
  'networking.k8s.io/v1=true',
  'flowcontrol.apiserver.k8s.io/v1=true',
  'admissionregistration.k8s.io/v1=true',
  'scheduling.k8s.io/v1=true',
  'events.k8s.io/v1=true',
  'storage.k8s.io/v1=true',
  'node.k8s.io/v1=true',
].join(',');
/** The test environment's process with --trim-apiservers: its Go runtime trades CPU for memory. */
const TRIMMED_ENV = { GOGC: '50' };
const dists = [{ name: 'this', dist: path.join(repoRoot(), 'dist') }];
if (values.reference) dists.push({ name: 'reference', dist: path.resolve(values.reference) });
// Several replicas need --shards, which a reference build may not have: the reference runs as one.
const builds: Build[] = dists.flatMap((d) =>
  (d.name === 'this' ? values.replicas!.split(',').map(Number) : [1]).map((r) => ({
    ...d,
    name: r > 1 ? `${d.name}×${r}` : d.name,
    replicas: r,
  })),
);

/** What the k-th Service of a cluster is, and how its GatewayDNS names it. */
interface ServiceKind {
  type: 'LoadBalancer' | 'ClusterIP' | 'NodePort' | 'Headless';
  resolution: ResolutionType;
  mirror?: boolean;
  localFirst?: boolean;
}
const KINDS: ServiceKind[] = [
  { type: 'LoadBalancer', resolution: 'loadBalancer' },
  { type: 'LoadBalancer', resolution: 'loadBalancer', mirror: true },
  { type: 'ClusterIP', resolution: 'clusterIP' },
  { type: 'ClusterIP', resolution: 'clusterIP', localFirst: true },
  { type: 'NodePort', resolution: 'nodePort' },
  { type: 'Headless', resolution: 'headless' },
  { type: 'Headless', resolution: 'headless', localFirst: true },
  { type: 'LoadBalancer', resolution: 'loadBalancer' },
  { type: 'ClusterIP', resolution: 'clusterIP' },
  { type: 'Headless', resolution: 'headless' },
];
const kindOf = (k: number): ServiceKind => KINDS[k % KINDS.length]!;
const serviceName = (k: number) => `svc-${k}`;
/** The GatewayDNS of a cluster's k-th Service, and its gatewayLabel (unique in the namespace). */
const gatewayName = (cluster: string, k: number) => `${cluster}-${serviceName(k)}`;

/**
 * What is running now (the test environment, operators, dns-servers), stopped on SIGINT or SIGTERM:
 * killed mid-run, the bench must not leave 100 API servers and an operator behind.
 */
const running = new Set<{ stop(): Promise<void> }>();
function track<T extends { stop(): Promise<void> }>(thing: T): T {
  running.add(thing);
  return thing;
}
async function untrack(thing: { stop(): Promise<void> }): Promise<void> {
  running.delete(thing);
  await thing.stop();
}
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    process.stderr.write(`${signal}: stopping what the bench started\n`);
    void Promise.allSettled([...running].map((t) => t.stop())).then(() => process.exit(130));
  });

/**
 * One client per cluster for the bench's own requests, sharing its connections (as the operator's
 * do): at 100 clusters, a new TLS connection per request made the API servers' accept path fail
 * ("socket disconnected before secure TLS connection was established").
 */
const clients = new WeakMap<TestEnv, Map<string, KubeConfig>>();
function kubeConfigOf(fleet: { env: TestEnv }, cluster: string): KubeConfig {
  let of = clients.get(fleet.env);
  if (!of) clients.set(fleet.env, (of = new Map()));
  let kc = of.get(cluster);
  if (!kc) {
    kc = fleet.env.kubeConfig(cluster);
    reuseConnections(kc);
    of.set(cluster, kc);
  }
  return kc;
}

interface Fleet {
  env: TestEnv;
  names: string[];
  teams: { namespace: string; clusters: string[] }[];
  teamOf: Map<string, string>;
  objects: { gatewayDns: number; serviceExports: number };
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** Runs fn over items, `width` at a time. */
async function inParallel<T>(
  items: T[],
  width: number,
  fn: (item: T, i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

/** A Node as a kubelet registers it (no kubelets here): the nodePort type's addresses. */
async function registerNode(kc: KubeConfig, c: number): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  await core.createNode({ body: { metadata: { name: 'node-1' } } });
  await core.replaceNodeStatus({
    name: 'node-1',
    body: {
      metadata: { name: 'node-1' },
      status: {
        addresses: [{ type: 'InternalIP', address: `10.250.${c >> 8}.${c & 255}` }],
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            message: 'kubelet is posting ready status',
            lastHeartbeatTime: new Date(),
            lastTransitionTime: new Date(),
          },
        ],
      },
    },
  });
}

/** The cluster's Services, their endpoints and their ServiceExports. */
async function populateCluster(kc: KubeConfig, c: number): Promise<void> {
  await ensureNamespace(kc, APPS);
  await ensureNamespace(kc, MIRROR_NS);
  await installCrds(kc, readManifests(path.join(repoRoot(), 'crds', 'mcs')));
  await registerNode(kc, c);
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  for (let k = 0; k < servicesPerCluster; k++) {
    const kind = kindOf(k);
    const name = serviceName(k);
    const ports = [{ name: 'http', port: 80, protocol: 'TCP' }];
    if (kind.type === 'LoadBalancer') await setLoadBalancer(kc, APPS, name, [{ ip: `172.16.${c}.${k}` }]);
    else
      await core.createNamespacedService({
        namespace: APPS,
        body: {
          metadata: { name },
          spec: {
            ...(kind.type === 'Headless' ? { clusterIP: 'None' } : { type: kind.type }),
            selector: { app: name },
            ports,
          },
        },
      });
    await writeEndpointSlice(kc, {
      namespace: APPS,
      service: name,
      name: `${name}-x`,
      addressType: 'IPv4',
      endpoints: Array.from({ length: 3 }, (_, i) => ({
        pod: `${name}-${i}`,
        address: `10.${100 + (c % 100)}.${(c >> 8) * 16 + k}.${i + 1}`,
        hostname: `${name}-${i}`,
        ready: true,
      })),
      ports: [{ name: 'http', port: 80 }],
    });
    await custom.createNamespacedCustomObject({
      ...MCS,
      namespace: APPS,
      plural: 'serviceexports',
      body: { apiVersion: MCS_API_VERSION, kind: 'ServiceExport', metadata: { name } },
    });
  }
}

function gatewayDnsObject(team: string, cluster: string, k: number): KubernetesObject {
  const kind = kindOf(k);
  const name = gatewayName(cluster, k);
  return {
    apiVersion: API_VERSION,
    kind: GATEWAYDNS_KIND,
    metadata: { name, namespace: team },
    spec: {
      clusterSelector: { matchLabels: { [CLUSTER_LABEL]: cluster } },
      service: `${APPS}/${serviceName(k)}`,
      resolutionType: kind.resolution,
      gatewayLabel: name,
      ...(kind.localFirst ? { answer: 'localFirst' } : {}),
      ...(kind.mirror ? { mirror: { namespace: MIRROR_NS, name } } : {}),
    },
  } as KubernetesObject;
}

async function startFleet(count: number): Promise<Fleet> {
  const names = Array.from({ length: count }, (_, i) => `c${pad(i + 1, 3)}`);
  const teams = Array.from({ length: Math.ceil(count / teamSize) }, (_, t) => ({
    namespace: `team-${pad(t, 2)}`,
    clusters: names.slice(t * teamSize, (t + 1) * teamSize),
  }));
  const teamOf = new Map(teams.flatMap((t) => t.clusters.map((c) => [c, t.namespace] as const)));
  const began = Date.now();
  const env = track(
    await TestEnv.start({
      workloadClusters: names,
      timeoutMs: 1_200_000,
      ...(values['trim-apiservers']
        ? { apiserverArgs: [`--runtime-config=${TRIMMED_RUNTIME_CONFIG}`], env: TRIMMED_ENV }
        : {}),
    }),
  );
  try {
    // Trimmed or not, every API server is ready as the operator's probe asks it.
    for (const name of ['management', ...names])
      await eventually(() => probeReadyz(kubeConfigOf({ env }, name), 10_000), 60_000, 500);
    const management = kubeConfigOf({ env }, 'management');
    for (const team of teams) {
      await prepareClusters(env, {
        namespace: team.namespace,
        workloads: team.clusters,
        recordsNamespace: RECORDS_NS,
      });
      await management
        .makeApiClient(CoreV1Api)
        .patchNamespace(
          { name: team.namespace, body: { metadata: { labels: { [CLUSTERSET_LABEL]: team.namespace } } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
      const custom = management.makeApiClient(CustomObjectsApi);
      for (const cluster of team.clusters)
        await custom.patchNamespacedCustomObject(
          {
            ...CLUSTER_API,
            namespace: team.namespace,
            name: cluster,
            body: { metadata: { labels: { [CLUSTER_LABEL]: cluster } } },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
    }
    process.stderr.write(`${count} workload clusters registered in ${Date.now() - began} ms\n`);
    return { env, names, teams, teamOf, objects: { gatewayDns: 0, serviceExports: 0 } };
  } catch (err) {
    await untrack(env);
    throw err;
  }
}

/** The objects the operator serves: Services, endpoints and exports in every cluster, the GatewayDNS. */
async function populate(fleet: Fleet): Promise<void> {
  const began = Date.now();
  await inParallel(fleet.names, 8, (name, c) => populateCluster(kubeConfigOf(fleet, name), c));
  const gateways = fleet.names.flatMap((cluster) =>
    Array.from({ length: servicesPerCluster }, (_, k) =>
      gatewayDnsObject(fleet.teamOf.get(cluster)!, cluster, k),
    ),
  );
  const management = kubeConfigOf(fleet, 'management');
  await inParallel(gateways, 8, async (g) => void (await apply(management, [g])));
  fleet.objects = { gatewayDns: gateways.length, serviceExports: fleet.names.length * servicesPerCluster };
  process.stderr.write(
    `${fleet.objects.gatewayDns} GatewayDNS, ${fleet.objects.serviceExports} ServiceExports in ${Date.now() - began} ms\n`,
  );
}

interface Conditioned extends KubernetesObject {
  status?: {
    observedGeneration?: number;
    conditions?: { type: string; status: string; observedGeneration?: number }[];
    clusters?: { cluster: string; state: string }[];
  };
}

const isReady = (o: Conditioned, observed: number | undefined) =>
  observed === o.metadata?.generation &&
  o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

/**
 * Every GatewayDNS (in the management cluster) and every ServiceExport (in every workload cluster)
 * as watches show them: the bench's own requests are one watch each, opened once per fleet.
 */
class Readiness {
  private waiters: (() => void)[] = [];
  private stops: (() => Promise<void>)[] = [];

  private constructor(
    private readonly gateways: ReturnType<typeof makeInformer<Conditioned>>,
    private readonly exports: ReturnType<typeof makeInformer<Conditioned>>[],
  ) {}

  static async watch(fleet: Fleet): Promise<Readiness> {
    const management = kubeConfigOf(fleet, 'management');
    const custom = management.makeApiClient(CustomObjectsApi);
    const gateways = makeInformer<Conditioned>(
      management,
      `/apis/${GROUP}/${VERSION}/${GATEWAYDNS_PLURAL}`,
      () => custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: GATEWAYDNS_PLURAL }),
    );
    const exports = fleet.names.map((name) => {
      const kc = kubeConfigOf(fleet, name);
      const api = kc.makeApiClient(CustomObjectsApi);
      return makeInformer<Conditioned>(
        kc,
        `/apis/${MCS.group}/${MCS.version}/namespaces/${APPS}/serviceexports`,
        () => api.listNamespacedCustomObject({ ...MCS, namespace: APPS, plural: 'serviceexports' }),
      );
    });
    const r = new Readiness(gateways, exports);
    for (const informer of [gateways, ...exports]) {
      informer.on('add', () => r.changed());
      informer.on('update', () => r.changed());
    }
    r.stops.push(await startRestarting(gateways));
    await inParallel(exports, 8, async (informer) => void r.stops.push(await startRestarting(informer)));
    return r;
  }

  private changed(): void {
    const waiters = this.waiters;
    this.waiters = [];
    waiters.forEach((w) => w());
  }

  /** Resolves once pred holds of what the watches show (checked on every event). */
  async until(pred: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`not within ${timeoutMs} ms: ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 1000));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  readyCounts(): { gateways: number; exports: number } {
    const gateways = this.gateways.list().filter((g) => isReady(g, g.status?.observedGeneration)).length;
    const exports = this.exports
      .flatMap((informer) => informer.list())
      .filter((e) =>
        isReady(e, e.status?.conditions?.find((c) => c.type === 'Ready')?.observedGeneration),
      ).length;
    return { gateways, exports };
  }

  clusterState(namespace: string, gateway: string, cluster: string): string | undefined {
    return this.gateways.get(gateway, namespace)?.status?.clusters?.find((c) => c.cluster === cluster)?.state;
  }

  async stop(): Promise<void> {
    await Promise.all(this.stops.map((s) => s()));
  }
}

const ours = `${MANAGED_BY_LABEL}=${CONTROLLER_NAME}`;

/** Nothing the operator writes is left: a run starts from an empty fleet but for the inputs. */
async function clearOutputs(fleet: Fleet): Promise<void> {
  const management = kubeConfigOf(fleet, 'management').makeApiClient(CustomObjectsApi);
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  await inParallel(fleet.names, 8, async (cluster) => {
    const kc = kubeConfigOf(fleet, cluster);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const core = kc.makeApiClient(CoreV1Api);
    const discovery = kc.makeApiClient(DiscoveryV1Api);
    await custom.deleteCollectionNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: RECORDS_NS,
      plural: DNSRECORDSET_PLURAL,
    });
    await custom.deleteCollectionNamespacedCustomObject({
      ...MCS,
      namespace: APPS,
      plural: 'serviceimports',
    });
    for (const ns of [APPS, MIRROR_NS]) {
      await discovery.deleteCollectionNamespacedEndpointSlice({ namespace: ns, labelSelector: ours });
      const services = await core.listNamespacedService({ namespace: ns, labelSelector: ours });
      for (const s of services.items)
        await core.deleteNamespacedService({ namespace: ns, name: s.metadata!.name! });
    }
    for (let k = 0; k < servicesPerCluster; k++)
      await custom.patchNamespacedCustomObjectStatus(
        { ...MCS, namespace: APPS, plural: 'serviceexports', name: serviceName(k), body: { status: null } },
        mergePatch,
      );
  });
  await inParallel(fleet.names, 8, async (cluster) => {
    for (let k = 0; k < servicesPerCluster; k++)
      await management.patchNamespacedCustomObjectStatus(
        {
          group: GROUP,
          version: VERSION,
          namespace: fleet.teamOf.get(cluster)!,
          plural: GATEWAYDNS_PLURAL,
          name: gatewayName(cluster, k),
          body: { status: null },
        },
        mergePatch,
      );
  });
}

/** Until every server answers `ip` for name (asked every 20 ms: a precomputed answer is cheap). */
async function answeredEverywhere(
  servers: DnsProcess[],
  name: string,
  ip: string,
  timeoutMs = 30_000,
): Promise<void> {
  await eventually(
    async () => {
      const answers = await Promise.all(
        servers.map((s) => addresses(s.port, name).catch((): string[] => [])),
      );
      if (!answers.every((a) => a.includes(ip))) throw new Error(`${name} not yet ${ip} everywhere`);
    },
    timeoutMs,
    20,
  );
}

/** The replicas of one build, started together; their metrics summed. */
class Operators {
  private constructor(readonly ops: OperatorProcess[]) {}

  static async start(fleet: Fleet, build: Build, nodeArgs: string[] = []): Promise<Operators> {
    const args = (i: number) =>
      build.replicas > 1
        ? ['--shards', String(SHARDS), '--identity', `scale-${i}`, '--no-manage-corefiles']
        : OPERATOR_ARGS;
    const ops = await Promise.all(
      Array.from({ length: build.replicas }, (_, i) =>
        startOperator(fleet.env.cluster('management').kubeconfig, args(i), nodeArgs, { dist: build.dist }),
      ),
    );
    return track(new Operators(ops));
  }

  get pids(): number[] {
    return this.ops.map((op) => op.child.pid!);
  }

  async metrics(): Promise<Record<string, number>> {
    const sum: Record<string, number> = {};
    for (const op of this.ops)
      for (const [k, v] of Object.entries(await metricsAt(op.health))) sum[k] = (sum[k] ?? 0) + v;
    return sum;
  }

  cpuSeconds(): number {
    return this.pids.reduce((a, pid) => a + cpuSeconds(pid), 0);
  }

  async stop(): Promise<void> {
    running.delete(this);
    await Promise.all(this.ops.map((op) => op.stop()));
  }
}

/** Resolves once the operator (every replica) has made no reconcile for 2 s. */
async function settled(op: Operators): Promise<void> {
  let last = -1;
  for (;;) {
    const m = await op.metrics();
    const now =
      sumMetric(m, 'controller_runtime_reconcile_total', { controller: 'gatewaydns' }) +
      (m['capi_dns_workload_writes_total'] ?? 0);
    if (now === last) return;
    last = now;
    await new Promise((r) => setTimeout(r, 2000));
  }
}

// Every management namespace (the teams'): the default.
const OPERATOR_ARGS = ['--no-leader-elect', '--no-manage-corefiles'];

interface Run {
  build: string;
  run: number;
  bareMb: number;
  coldMs: number;
  coldRequestsPerCluster: number;
  /** Reconciles (GatewayDNS) and workload writes the operator counted by the end of its cold start. */
  coldReconciles: number;
  coldWrites: number;
  /** CPU seconds over the cold start: the operator's, and the test environment's (every API server). */
  coldOperatorCpu: number;
  coldApiServersCpu: number;
  rest: AtRest;
  watchesPerCluster: number;
  changeMs: number[];
  writesPerChange: number;
  /** GatewayDNS reconciles a change caused (one selects the changed cluster). */
  reconcilesPerChange: number;
  toUnreachableMs: number;
  toReadyMs: number;
  load: string;
}

async function measureRun(
  fleet: Fleet,
  build: Build,
  run: number,
  readiness: Readiness,
  servers: DnsProcess[],
  bareMb: number,
  watchesWithout: number,
): Promise<Run> {
  await clearOutputs(fleet);
  const total = { gateways: fleet.objects.gatewayDns, exports: fleet.objects.serviceExports };
  const requestsBefore = await allRequests(fleet.env, fleet.names);
  const snapshotDir =
    values['heap-snapshot'] && run === 1 && build.replicas === 1
      ? mkdtempSync(path.join(os.tmpdir(), 'capi-dns-heap-'))
      : undefined;
  const apiServersCpuBefore = cpuSeconds(fleet.env.info.pid);
  const began = Date.now();
  const op = await Operators.start(
    fleet,
    build,
    snapshotDir ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshotDir}`] : [],
  );
  try {
    await readiness.until(
      () => {
        const r = readiness.readyCounts();
        return r.gateways === total.gateways && r.exports === total.exports;
      },
      900_000,
      `every GatewayDNS and ServiceExport Ready (${JSON.stringify(readiness.readyCounts())} of ${JSON.stringify(total)})`,
    );
    const coldMs = Date.now() - began;
    const atReady = await op.metrics();
    const coldOperatorCpu = op.cpuSeconds();
    const coldApiServersCpu = cpuSeconds(fleet.env.info.pid) - apiServersCpuBefore;
    await settled(op);
    const coldRequests = [...difference(await allRequests(fleet.env, fleet.names), requestsBefore)]
      .filter(([k]) => OPERATOR_RESOURCES.has(k.split(' ')[1] ?? ''))
      .reduce((a, [, v]) => a + v, 0);
    const rest = await measureRest(fleet.env, fleet.names, restSeconds, op.pids);
    const watches = (await watchesOpen(fleet.env, fleet.names)) - watchesWithout;

    // Per change: the first cluster's first LoadBalancer, answered by every dns-server of its team.
    const first = fleet.names[0]!;
    const team = fleet.teamOf.get(first)!;
    const name = `x.${gatewayName(first, 0)}.${team}.clusters.xcc.test`;
    const kc = kubeConfigOf(fleet, first);
    const changeMs: number[] = [];
    const before = await op.metrics();
    const writesBefore = before['capi_dns_workload_writes_total'] ?? 0;
    const reconcilesBefore = sumMetric(before, 'controller_runtime_reconcile_total', {
      controller: 'gatewaydns',
    });
    for (let i = 0; i < changeCount; i++) {
      const ip = `172.31.${run}.${(i % 2) + 1 + 2 * (i % 50)}`;
      const t = performance.now();
      await setLoadBalancer(kc, APPS, serviceName(0), [{ ip }]);
      await answeredEverywhere(servers, name, ip);
      changeMs.push(performance.now() - t);
    }
    await settled(op);
    const after = await op.metrics();
    const writesPerChange = ((after['capi_dns_workload_writes_total'] ?? 0) - writesBefore) / changeCount;
    const reconcilesPerChange =
      (sumMetric(after, 'controller_runtime_reconcile_total', { controller: 'gatewaydns' }) -
        reconcilesBefore) /
      changeCount;

    // A workload API server stopped, then started: the last cluster of the first team.
    const victim = fleet.teams[0]!.clusters.at(-1)!;
    const gateway = gatewayName(victim, 0);
    let t = Date.now();
    await stopCluster(fleet.env.info, victim);
    await readiness.until(
      () => readiness.clusterState(team, gateway, victim) === 'Unreachable',
      180_000,
      `${gateway}: ${victim} Unreachable`,
    );
    const toUnreachableMs = Date.now() - t;
    t = Date.now();
    await startCluster(fleet.env.info, victim);
    await readiness.until(
      () => readiness.clusterState(team, gateway, victim) === 'Ready',
      180_000,
      `${gateway}: ${victim} Ready again`,
    );
    const ip = `172.31.${run}.250`;
    await setLoadBalancer(kc, APPS, serviceName(0), [{ ip }]);
    await answeredEverywhere(servers, name, ip, 120_000);
    const toReadyMs = Date.now() - t;
    if (snapshotDir)
      await printHeap(op.ops[0]!, snapshotDir, `${fleet.names.length} clusters, ${build.name}`);
    return {
      build: build.name,
      run,
      bareMb,
      coldMs,
      coldRequestsPerCluster: coldRequests / fleet.names.length,
      coldReconciles: sumMetric(atReady, 'controller_runtime_reconcile_total', { controller: 'gatewaydns' }),
      coldWrites: atReady['capi_dns_workload_writes_total'] ?? NaN,
      coldOperatorCpu,
      coldApiServersCpu,
      rest,
      watchesPerCluster: watches / fleet.names.length,
      changeMs,
      writesPerChange,
      reconcilesPerChange,
      toUnreachableMs,
      toReadyMs,
      load: loadAverage(),
    };
  } finally {
    await op.stop();
    if (snapshotDir) rmSync(snapshotDir, { recursive: true, force: true });
  }
}

/** Asks the operator for a heap snapshot (it collects garbage first) and prints what it holds. */
async function printHeap(op: OperatorProcess, dir: string, label: string): Promise<void> {
  op.child.kill('SIGUSR2');
  const file = await eventually(
    async () => {
      const name = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot'));
      if (!name) throw new Error('no heap snapshot yet');
      const size = statSync(path.join(dir, name)).size;
      await new Promise((r) => setTimeout(r, 1000));
      if (statSync(path.join(dir, name)).size !== size || size === 0) throw new Error('still being written');
      return path.join(dir, name);
    },
    120_000,
    500,
  );
  const heap = summarizeHeapSnapshot(file);
  console.log(
    `    heap (${label}): ${heap.totalMb.toFixed(1)} MB live; ${heap.top.map((t) => `${t.what} ${t.mb.toFixed(1)} MB ×${t.count}`).join('; ')}`,
  );
}

/** The operator over the registered clusters before any object exists: resident memory once settled (all replicas). */
async function bareMemory(fleet: Fleet, build: Build): Promise<number> {
  const op = await Operators.start(fleet, build);
  try {
    await settled(op);
    await new Promise((r) => setTimeout(r, 5000));
    return op.pids.reduce((a, pid) => a + memoryMb(pid), 0);
  } finally {
    await op.stop();
  }
}

interface FleetResult {
  clusters: number;
  objects: number;
  runs: Run[];
  baselinePerMinute: number;
}

async function measureFleet(count: number): Promise<FleetResult> {
  const fleet = await startFleet(count);
  const servers: DnsProcess[] = [];
  let readiness: Readiness | undefined;
  try {
    const bare = new Map<string, number>();
    for (const build of builds) bare.set(build.name, await bareMemory(fleet, build));
    await populate(fleet);
    for (const cluster of fleet.teams[0]!.clusters)
      servers.push(
        track(
          await startDnsServer(['--zone', 'xcc.test', '--kubeconfig', fleet.env.cluster(cluster).kubeconfig]),
        ),
      );
    readiness = await Readiness.watch(fleet);
    const watchesWithout = await watchesOpen(fleet.env, fleet.names);
    // The clusters with no operator: what the API servers, Cluster API and the dns-servers do by themselves.
    const baseline = await measureRest(fleet.env, fleet.names, restSeconds);
    const runs: Run[] = [];
    for (let run = 1; run <= Number(values.runs); run++)
      for (const build of run % 2 === 1 ? builds : [...builds].reverse()) {
        const r = await measureRun(
          fleet,
          build,
          run,
          readiness,
          servers,
          bare.get(build.name)!,
          watchesWithout,
        );
        // Beyond the no-operator baseline, of what the operator reads or writes.
        for (const [k, v] of baseline.requests) {
          const left = (r.rest.requests.get(k) ?? 0) - v;
          if (left > 0) r.rest.requests.set(k, left);
          else r.rest.requests.delete(k);
        }
        for (const k of [...r.rest.requests.keys()])
          if (!OPERATOR_RESOURCES.has(k.split(' ')[1] ?? '')) r.rest.requests.delete(k);
        printRun(count, fleet.objects.gatewayDns + fleet.objects.serviceExports, r);
        runs.push(r);
      }
    const total = [...baseline.requests.values()].reduce((a, b) => a + b, 0);
    return {
      clusters: count,
      objects: fleet.objects.gatewayDns + fleet.objects.serviceExports,
      runs,
      baselinePerMinute: (total * 60) / restSeconds / count,
    };
  } finally {
    await readiness?.stop();
    await Promise.all(servers.map(untrack));
    await untrack(fleet.env);
  }
}

const perMinutePerCluster = (n: number, clusters: number) => (n * 60) / restSeconds / clusters;

function printRun(clusters: number, objects: number, r: Run): void {
  const sorted = [...r.changeMs].sort((a, b) => a - b);
  const restTotal = [...r.rest.requests.values()].reduce((a, b) => a + b, 0);
  const detail = [...r.rest.requests]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([k, v]) => `${k} ${perMinutePerCluster(v, clusters).toFixed(2)}`)
    .join(', ');
  console.log(
    [
      String(clusters).padStart(8),
      String(objects).padStart(7),
      r.build.padEnd(9),
      String(r.run).padStart(3),
      r.bareMb.toFixed(0).padStart(7),
      (r.coldMs / 1000).toFixed(1).padStart(7),
      r.coldRequestsPerCluster.toFixed(0).padStart(9),
      r.rest.rssMb.toFixed(0).padStart(7),
      ((r.rest.cpuSeconds * 60) / restSeconds).toFixed(2).padStart(8),
      perMinutePerCluster(restTotal, clusters).toFixed(2).padStart(10),
      (r.rest.sockets / clusters).toFixed(2).padStart(8),
      r.watchesPerCluster.toFixed(1).padStart(8),
      `${percentile(sorted, 50).toFixed(0)}/${percentile(sorted, 99).toFixed(0)}`.padStart(10),
      r.writesPerChange.toFixed(1).padStart(7),
      (r.toUnreachableMs / 1000).toFixed(1).padStart(7),
      (r.toReadyMs / 1000).toFixed(1).padStart(7),
      `  (${r.rest.rssMaxMb !== r.rest.rssMb ? `largest replica ${r.rest.rssMaxMb.toFixed(0)} MB; ` : ''}${r.reconcilesPerChange.toFixed(1)} reconciles a change; to Ready: ${r.coldReconciles} reconciles, ${r.coldWrites} writes, CPU ${r.coldOperatorCpu.toFixed(1)} s operator, ${r.coldApiServersCpu.toFixed(1)} s API servers; ${r.load}${detail ? `; at rest: ${detail}` : ''})`,
    ].join(' '),
  );
}

/** Least squares of y = a + b·x. */
function line(points: [number, number][]): { a: number; b: number } {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const b = sxx ? sxy / sxx : NaN;
  return { a: my - b * mx, b };
}

function printFit(results: FleetResult[]): void {
  for (const build of builds) {
    const of = (pick: (r: Run) => number) =>
      results.flatMap((f) =>
        f.runs.filter((r) => r.build === build.name).map((r) => [f.clusters, pick(r)] as [number, number]),
      );
    // A line needs two fleet sizes; with one, only the per-cluster figures below.
    if (results.length > 1) {
      const bare = line(of((r) => r.bareMb));
      const full = line(of((r) => r.rest.rssMb));
      const cold = line(of((r) => r.coldMs / 1000));
      const perObject = results.flatMap((f) =>
        f.runs
          .filter((r) => r.build === build.name)
          .map((r) => ((r.rest.rssMb - r.bareMb) * 1024) / f.objects),
      );
      console.log(
        `fit (${build.name}): resident memory, no objects ${bare.a.toFixed(0)} MB + ${bare.b.toFixed(2)} MB a cluster; with the objects ${full.a.toFixed(0)} MB + ${full.b.toFixed(2)} MB a cluster (${servicesPerCluster * 2} objects a cluster); per object ${Math.min(...perObject).toFixed(1)}–${Math.max(...perObject).toFixed(1)} KB; cold start ${cold.a.toFixed(1)} s + ${(cold.b * 1000).toFixed(0)} ms a cluster`,
      );
    }
    // Faster than linear shows as a per-cluster figure that grows with N.
    for (const f of results) {
      const runs = f.runs.filter((r) => r.build === build.name);
      const each = (pick: (r: Run) => number) => runs.map((r) => pick(r).toFixed(2)).join('–');
      console.log(
        `  N=${String(f.clusters).padStart(3)}: per cluster ${each((r) => r.rest.rssMb / f.clusters)} MB resident, ${each((r) => r.coldMs / f.clusters)} ms of cold start, ${each((r) => r.coldRequestsPerCluster)} requests to start; the clusters' own requests at rest ${f.baselinePerMinute.toFixed(1)} a minute each`,
      );
    }
  }
}

console.log(machine());
console.log(
  `teams of ${teamSize} clusters (a management namespace and a ClusterSet each); per cluster ${servicesPerCluster} Services, each with a GatewayDNS and a ServiceExport; ${changeCount} changes a run; ${restSeconds} s at rest`,
);
if (values['trim-apiservers'])
  console.log(
    `API servers trimmed: --runtime-config=${TRIMMED_RUNTIME_CONFIG}, the test environment at GOGC=${TRIMMED_ENV.GOGC}`,
  );
console.log(
  'clusters objects build     run bare MB cold s  req/clus  rest MB  cpu s/m  req/min/cl  sock/cl  watch/cl  chg p50/p99 wr/chg  down s    up s',
);
const results: FleetResult[] = [];
for (const count of values.clusters!.split(',').map(Number)) {
  try {
    results.push(await measureFleet(count));
  } catch (err) {
    // A fleet this machine cannot hold says so, and the fleets measured still get their fit.
    // fetch's own message ("fetch failed") hides the reason in its cause.
    const cause = err instanceof Error && err.cause ? ` (${String(err.cause)})` : '';
    console.log(
      `${String(count).padStart(8)}  failed: ${err instanceof Error ? err.message : String(err)}${cause}`,
    );
    if (err instanceof Error) process.stderr.write(`${err.stack}\n`);
  }
}
if (results.length) printFit(results);
