// Endpoint readiness → DNS answer, for the headless resolution type: a
// StatefulSet-like Service of P pods in each of C workload clusters (real API
// servers, test/testenv), the operator and one dns-server per cluster as child
// processes. Each change makes every pod of the first cluster unready (or ready
// again) in one EndpointSlice write, as the EndpointSlice controller would;
// the latency runs until the dns-server of EVERY cluster answers the
// cluster-independent name without (or with) them, asked over TCP on each of
// its rebuilds (event-driven: the bench must not load the machine it measures).
// Also: the record set's size, record-set writes and deletes per change (O(clusters)), and
// writes for a slice event that changes nothing (zero).
//
// With --mirror, the GatewayDNS also has spec.mirror (namespace "mirror"), so
// every cluster keeps the Service as a local one with an EndpointSlice per
// source cluster; the same change is then also timed until the mirror slice of
// the first cluster holds it in EVERY cluster (a watch in each), the
// EndpointSlice path, measured in the same run as the DNS path, change by change.
//
// With --local-first, the GatewayDNS answers localFirst: the cluster-independent name answers
// each cluster's own pods, so the change is seen there only in the first cluster (its own pods
// gone: the others' instead); every other cluster is asked the first cluster's own name.
//
// With --dns-servers K, only K of the clusters (spread, the first among them) run a dns-server, as
// in a fleet where most clusters only receive record sets; the record set of the changed cluster is
// watched in EVERY cluster, so the output splits the time: operator and writes (first and last
// cluster to hold the new set), then the dns-servers' watch and rebuild.
//
// With --reference DIST (another build's dist, e.g. main's in a worktree with node_modules linked)
// and --runs R, one test environment serves R rounds of both operators in turn (this, reference,
// this, ...): the same clusters and dns-servers, only the operator process differs.
//
//   npm run build && node dist/bench/endpoint-propagation.js [--clusters 10] [--pods 100] [--changes 40] [--mirror] [--local-first]
//     [--dns-servers K] [--reference ../ref/dist] [--runs 2]
//     [--build-worker-idle 0s]   (the dns-servers' flag: 0s is a fresh build thread per rebuild, as before ADR 0103)
import { loadavg } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import {
  CoreV1Api,
  DiscoveryV1Api,
  makeInformer,
  type KubernetesObject,
  type V1EndpointSlice,
} from '@kubernetes/client-node';
import { recordSetName } from '../api/index.js';
import { ensureNamespace } from '../test/support/capi.js';
import { exchange, startDnsServer, type DnsProcess } from '../test/support/dns.js';
import { writeEndpointSlice, type TestEndpoint } from '../test/support/endpointslices.js';
import { apply, eventually, startRestarting } from '../test/support/kube.js';
import { metricsAt, readRecordSet, recordSetInformer, startOperator } from '../test/support/operator.js';
import { repoRoot } from '../test/support/paths.js';
import { prepareClusters } from '../test/support/prepare.js';
import { TestEnv } from '../test/support/testenv.js';
import { machine } from './dns-load.js';
import { memoryMb } from './proc.js';
import { percentile } from './rank.js';
import { sumMetric } from '../test/support/metrics.js';

const NS = 'bench';
const APPS = 'apps';
const MIRROR_NS = 'mirror';
const NAME = `db.${NS}.clusters.xcc.test`;

/** A query for `x.<name>` A; the answer count is all we read. */
function query(id: number, name: string): Buffer {
  const labels = `x.${name}`.split('.');
  return Buffer.concat([
    Buffer.from([id >> 8, id & 255, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]),
    ...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])),
    Buffer.from([0, 0, 1, 0, 1]),
  ]);
}

async function answerCount(port: number, name: string): Promise<number> {
  const response = await exchange(port, query(7, name), 'tcp', 1000);
  return response.readUInt16BE(6);
}

function pods(cluster: number, count: number, ready: boolean): TestEndpoint[] {
  return Array.from({ length: count }, (_, i) => ({
    pod: `db-${i}`,
    address: `10.${100 + cluster}.${i >> 8}.${i & 255}`,
    hostname: `db-${i}`,
    ready,
  }));
}

/**
 * Watches, in every cluster, the mirror slice of the first cluster's pods and records when each
 * cluster first shows `ready` ready endpoints in it.
 */
async function watchMirrorSlices(
  env: TestEnv,
  names: string[],
): Promise<{ arrivals: Map<string, number>; readyIn: Map<string, number>; stop(): Promise<void> }> {
  const arrivals = new Map<string, number>();
  const readyIn = new Map<string, number>();
  const stops: (() => Promise<void>)[] = [];
  const sliceName = `db.${names[0]}`;
  for (const name of names) {
    const kc = env.kubeConfig(name);
    const discovery = kc.makeApiClient(DiscoveryV1Api);
    const informer = makeInformer<V1EndpointSlice>(
      kc,
      `/apis/discovery.k8s.io/v1/namespaces/${MIRROR_NS}/endpointslices`,
      () => discovery.listNamespacedEndpointSlice({ namespace: MIRROR_NS }),
    );
    const seen = (s: V1EndpointSlice) => {
      if (s.metadata?.name !== sliceName) return;
      const ready = (s.endpoints ?? []).filter((e) => e.conditions?.ready !== false).length;
      if (readyIn.get(name) === ready) return;
      readyIn.set(name, ready);
      arrivals.set(`${name}|${ready}`, performance.now());
    };
    informer.on('add', seen);
    informer.on('update', seen);
    stops.push(await startRestarting(informer));
  }
  return { arrivals, readyIn, stop: async () => void (await Promise.all(stops.map((s) => s()))) };
}

/** An operator build to measure: this repository's dist, or a reference's (e.g. main's). */
interface Build {
  name: string;
  dist: string;
}

interface RunOptions {
  clusterCount: number;
  podCount: number;
  changes: number;
  mirror: boolean;
  localFirst: boolean;
  buildWorkerIdle: string | undefined;
  /** How many clusters run a dns-server (spread over the clusters, the first always one of them). */
  dnsServers: number;
  builds: Build[];
  runs: number;
}

/** What one operator process measured over its changes. */
interface Measured {
  build: string;
  latencies: number[];
  /** Change → the changed cluster's record set in the first / the last cluster (watched in every one). */
  firstWritten: number[];
  lastWritten: number[];
  sliceLatencies: number[];
  writes: number[];
  reconcileCounts: number[];
  noopWrites: number;
  operatorMeanMs: number;
  rebuildMs: number[];
  rssMb: number;
  load: number;
  /** Reconciles the operator made after its start before it went quiet, and how long that took. */
  startReconciles: number;
  settleMs: number;
}

/** Resolves with the reconcile count once the operator has made none for 2 s. */
async function settled(health: string): Promise<number> {
  let last = -1;
  for (;;) {
    const now = sumMetric(await metricsAt(health), 'controller_runtime_reconcile_total', {
      controller: 'gatewaydns',
    });
    if (now === last) return now;
    last = now;
    await new Promise((r) => setTimeout(r, 2000));
  }
}

/** Indices of `count` of `total` clusters, evenly spread, the first and the last among them. */
function spread(total: number, count: number): number[] {
  if (count >= total) return Array.from({ length: total }, (_, i) => i);
  if (count === 1) return [0];
  return [...new Set(Array.from({ length: count }, (_, i) => Math.round((i * (total - 1)) / (count - 1))))];
}

/**
 * Watches, in every cluster, the record set of the first cluster's pods and notes when its record
 * count last changed there (0: no set, as after every pod went unready).
 */
async function watchRecordSets(
  env: TestEnv,
  names: string[],
): Promise<{ changedAt: Map<string, number>; stop(): Promise<void> }> {
  const changedAt = new Map<string, number>();
  const count = new Map<string, number>();
  const setName = recordSetName(NS, 'db', names[0]!);
  const stops: (() => Promise<void>)[] = [];
  for (const name of names) {
    const informer = recordSetInformer(env.kubeConfig(name));
    const seen = (records: number) => {
      if (count.get(name) === records) return;
      count.set(name, records);
      changedAt.set(name, performance.now());
    };
    informer.on('add', (o) => o.metadata?.name === setName && seen(o.spec.records.length));
    informer.on('update', (o) => o.metadata?.name === setName && seen(o.spec.records.length));
    informer.on('delete', (o) => o.metadata?.name === setName && seen(0));
    stops.push(await startRestarting(informer));
  }
  return { changedAt, stop: async () => void (await Promise.all(stops.map((s) => s()))) };
}

async function run(o: RunOptions): Promise<void> {
  const { clusterCount, podCount, mirror, localFirst, buildWorkerIdle } = o;
  const names = Array.from({ length: clusterCount }, (_, i) => `cluster-${i + 1}`);
  const withServer = spread(clusterCount, o.dnsServers);
  const began = Date.now();
  const env = await TestEnv.start({ workloadClusters: names });
  const servers: { dns: DnsProcess; cluster: number }[] = [];
  const stops: (() => Promise<void>)[] = [];
  let op: Awaited<ReturnType<typeof startOperator>> | undefined;
  try {
    await prepareClusters(env, { namespace: NS, workloads: names, recordsNamespace: 'capi-dns' });
    const management = env.kubeConfig('management');
    const slice = (c: number, ready: boolean, nodeName?: string) =>
      writeEndpointSlice(env.kubeConfig(names[c]!), {
        namespace: APPS,
        service: 'db',
        name: 'db-x',
        addressType: 'IPv4',
        endpoints: pods(c, podCount, ready).map((p) => ({ ...p, ...(nodeName ? { nodeName } : {}) })),
        ports: [{ name: 'pg', port: 5432 }],
      });
    for (const [c, name] of names.entries()) {
      const kc = env.kubeConfig(name);
      await ensureNamespace(kc, APPS);
      if (mirror) await ensureNamespace(kc, MIRROR_NS);
      await kc.makeApiClient(CoreV1Api).createNamespacedService({
        namespace: APPS,
        body: {
          metadata: { name: 'db' },
          spec: { clusterIP: 'None', selector: { app: 'db' }, ports: [{ name: 'pg', port: 5432 }] },
        },
      });
      await slice(c, true);
      if (!withServer.includes(c)) continue;
      // Its "serving" line (info) is how the helper knows it is up: no --log-level warn here.
      servers.push({
        cluster: c,
        dns: await startDnsServer([
          '--zone',
          'xcc.test',
          '--kubeconfig',
          env.cluster(name).kubeconfig,
          ...(buildWorkerIdle ? ['--build-worker-idle', buildWorkerIdle] : []),
        ]),
      });
    }
    process.stderr.write(
      `${clusterCount} workload clusters ready in ${Date.now() - began} ms; dns-servers in ${servers.length} of them\n`,
    );
    await apply(management, [
      {
        apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
        kind: 'GatewayDNS',
        metadata: { name: 'db', namespace: NS },
        spec: {
          clusterSelector: {},
          service: `${APPS}/db`,
          resolutionType: 'headless',
          gatewayLabel: 'db',
          ...(mirror ? { mirror: { namespace: MIRROR_NS } } : {}),
          ...(localFirst ? { answer: 'localFirst' } : {}),
        },
      } as KubernetesObject,
    ]);
    const all = clusterCount * podCount;
    // What the server in cluster c is asked, and how many addresses it answers while the first cluster is (not) ready.
    const firstClusterName = `db.${names[0]}.${NS}.clusters.xcc.test`;
    const asked = (c: number) => (localFirst && c > 0 ? firstClusterName : NAME);
    const expected = (c: number, ready: boolean) =>
      !localFirst
        ? ready
          ? all
          : all - podCount
        : c > 0
          ? ready
            ? podCount
            : 0
          : ready
            ? podCount
            : all - podCount;
    // Asked again whenever a dns-server logs a rebuild (its answers change only then), and every
    // 250 ms in case a line is missed: polling every server over TCP every 10 ms, as this bench
    // once did, kept a whole core busy and slowed what it measured.
    const rebuilt = servers.map(() => new Set<() => void>());
    let rebuildMs: number[] = [];
    servers.forEach((s, i) =>
      readline.createInterface({ input: s.dns.child.stderr! }).on('line', (line) => {
        if (!line.includes('"zones rebuilt"')) return;
        rebuildMs.push(Number(/"ms":(\d+)/.exec(line)?.[1] ?? NaN));
        for (const wake of rebuilt[i]!) wake();
      }),
    );
    const answeredEverywhere = (ready: boolean, timeoutMs: number) =>
      Promise.all(
        servers.map(async ({ dns, cluster }, i) => {
          const deadline = performance.now() + timeoutMs;
          for (;;) {
            const woken = new Promise<void>((resolve) => {
              const wake = () => {
                rebuilt[i]!.delete(wake);
                clearTimeout(timer);
                resolve();
              };
              const timer = setTimeout(wake, 250);
              rebuilt[i]!.add(wake);
            });
            const want = expected(cluster, ready);
            const got = await answerCount(dns.port, asked(cluster)).catch(() => -1);
            if (got === want) return;
            if (performance.now() > deadline)
              throw new Error(`port ${dns.port}: ${got} answers, want ${want}`);
            await woken;
          }
        }),
      );
    const recordSets = await watchRecordSets(env, names);
    stops.push(recordSets.stop);
    const mirrors = mirror ? await watchMirrorSlices(env, names) : undefined;
    if (mirrors) stops.push(mirrors.stop);
    let ready = true;
    const set = { records: 0, octets: 0 };

    const measure = async (build: Build): Promise<Measured> => {
      op = await startOperator(
        env.cluster('management').kubeconfig,
        ['--namespace', NS, '--no-leader-elect', '--log-level', 'warn'],
        [],
        { dist: build.dist },
      );
      const started = performance.now();
      await answeredEverywhere(ready, 60_000);
      // Settled: a start reconciles the GatewayDNS again as each cluster connects (10 to 16 times at
      // 40 clusters); a change made meanwhile waits behind them and measures the start, not the path.
      const startReconciles = await settled(op.health);
      const settleMs = performance.now() - started;
      if (mirrors)
        await eventually(async () => {
          const want = ready ? podCount : 0;
          if (!names.every((n) => mirrors.readyIn.get(n) === want))
            throw new Error('mirrors not in place yet');
        }, 60_000);
      const current = await readRecordSet(env.kubeConfig(names[0]!), `${NS}.db`);
      set.records = current?.spec.records.length ?? 0;
      set.octets = Buffer.byteLength(JSON.stringify(current?.spec));
      const metric = async (name: string, labels: Record<string, string> = {}) =>
        sumMetric(await metricsAt(op!.health), name, labels);
      // A cluster whose pods all became unready has no set left: it is deleted, not written.
      const written = async () =>
        (await metric('capi_dns_recordsets_written_total')) +
        (await metric('capi_dns_recordsets_deleted_total'));
      // The operator's own share (change seen → reconcile done, record sets written everywhere), from
      // its histogram: what is left of the end-to-end figure is the dns-servers' watch, rebuild and answer.
      const operatorSeconds = async () => ({
        sum: await metric('capi_dns_propagation_latency_seconds_sum'),
        count: await metric('capi_dns_propagation_latency_seconds_count'),
      });
      const m: Measured = {
        build: build.name,
        latencies: [],
        firstWritten: [],
        lastWritten: [],
        sliceLatencies: [],
        writes: [],
        reconcileCounts: [],
        noopWrites: 0,
        operatorMeanMs: NaN,
        rebuildMs: [],
        rssMb: NaN,
        load: loadavg()[0]!,
        startReconciles,
        settleMs,
      };
      rebuildMs = [];
      const operatorBefore = await operatorSeconds();
      for (let i = 1; i <= o.changes; i++) {
        ready = !ready;
        const before = await written();
        const reconcilesBefore = await metric('controller_runtime_reconcile_total', {
          controller: 'gatewaydns',
        });
        const t0 = performance.now();
        await slice(0, ready);
        await answeredEverywhere(ready, 30_000);
        m.latencies.push(performance.now() - t0);
        await eventually(
          async () => {
            if (!names.every((n) => (recordSets.changedAt.get(n) ?? 0) > t0))
              throw new Error('record set not changed everywhere yet');
          },
          10_000,
          10,
        );
        const at = names.map((n) => recordSets.changedAt.get(n)! - t0);
        m.firstWritten.push(Math.min(...at));
        m.lastWritten.push(Math.max(...at));
        if (mirrors) {
          const want = ready ? podCount : 0;
          await eventually(
            async () => {
              if (!names.every((n) => mirrors.arrivals.has(`${n}|${want}`)))
                throw new Error('not everywhere yet');
            },
            10_000,
            10,
          );
          m.sliceLatencies.push(Math.max(...names.map((n) => mirrors.arrivals.get(`${n}|${want}`)!)) - t0);
          for (const n of names) mirrors.arrivals.delete(`${n}|${want}`);
        }
        // Let the reconcile finish its status write before counting.
        await new Promise((r) => setTimeout(r, 300));
        m.writes.push((await written()) - before);
        m.reconcileCounts.push(
          (await metric('controller_runtime_reconcile_total', { controller: 'gatewaydns' })) -
            reconcilesBefore,
        );
      }
      const operatorAfter = await operatorSeconds();
      m.operatorMeanMs =
        (1000 * (operatorAfter.sum - operatorBefore.sum)) /
        Math.max(1, operatorAfter.count - operatorBefore.count);
      m.rebuildMs = rebuildMs;
      m.rssMb = op.child.pid ? memoryMb(op.child.pid) : NaN;
      // An event that changes nothing the GatewayDNS publishes: the slice's pods on another node.
      const beforeNoop = await written();
      await slice(1, true, `node-${Date.now()}`);
      await new Promise((r) => setTimeout(r, 1000));
      m.noopWrites = (await written()) - beforeNoop;
      await op.stop();
      op = undefined;
      return m;
    };

    const results: Measured[] = [];
    for (let r = 0; r < o.runs; r++)
      for (const build of o.builds) {
        process.stderr.write(`run ${r + 1}, ${build.name}\n`);
        results.push(await measure(build));
      }

    const f = (ms: number) => `${ms.toFixed(0)} ms`;
    const dist = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      return `p50 ${f(percentile(s, 50))}  p99 ${f(percentile(s, 99))}  min ${f(s[0]!)}  max ${f(s[s.length - 1]!)}`;
    };
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    process.stdout.write(
      [
        `${clusterCount} clusters x ${podCount} pods (${all} endpoints), dns-servers in ${servers.length}, answer ${localFirst ? 'localFirst' : 'all'}, dns-server --build-worker-idle ${buildWorkerIdle ?? 'default'}, ${o.changes} readiness changes of ${podCount} pods in one cluster per run`,
        `  record sets of the GatewayDNS, merged: ${set.records} records, ${set.octets} octets of spec (JSON), all pods ready`,
        machine(),
        ...results.flatMap((m, i) => [
          `run ${Math.floor(i / o.builds.length) + 1}, ${m.build} (load ${m.load.toFixed(1)} at start):`,
          `  answer in every dns-server:        ${dist(m.latencies)}`,
          `  record set in the first cluster:   ${dist(m.firstWritten)}`,
          `  record set in the last cluster:    ${dist(m.lastWritten)}`,
          `  operator, change seen → reconcile done (mean): ${f(m.operatorMeanMs)}; dns-server rebuild mean ${f(mean(m.rebuildMs))}, max ${f(Math.max(...m.rebuildMs))} (${m.rebuildMs.length} rebuilds)`,
          `  writes and deletes per change: ${m.writes.join(' ')}; reconciles per change: ${m.reconcileCounts.join(' ')}; for a no-op event: ${m.noopWrites}`,
          `  operator start: ${m.startReconciles} reconciles before it went quiet (${f(m.settleMs)}, 2 s quiet included); resident memory after the changes: ${m.rssMb.toFixed(0)} MB`,
          ...(mirror
            ? [`  EndpointSlice path (mirror slice in every cluster): ${dist(m.sliceLatencies)}`]
            : []),
        ]),
        '',
      ].join('\n'),
    );
  } finally {
    await op?.stop();
    for (const stop of stops) await stop().catch(() => undefined);
    await Promise.all(servers.map((s) => s.dns.stop()));
    await env.stop();
  }
}

const { values } = parseArgs({
  options: {
    clusters: { type: 'string', default: '10' },
    pods: { type: 'string', default: '100' },
    changes: { type: 'string', default: '40' },
    mirror: { type: 'boolean', default: false },
    'local-first': { type: 'boolean', default: false },
    'build-worker-idle': { type: 'string' },
    'dns-servers': { type: 'string' },
    reference: { type: 'string' },
    runs: { type: 'string', default: '1' },
  },
});
const builds: Build[] = [{ name: 'this', dist: path.join(repoRoot(), 'dist') }];
if (values.reference) builds.push({ name: 'reference', dist: path.resolve(values.reference) });
for (const n of values.clusters.split(',').map(Number))
  await run({
    clusterCount: n,
    podCount: Number(values.pods),
    changes: Number(values.changes),
    mirror: values.mirror,
    localFirst: values['local-first'],
    buildWorkerIdle: values['build-worker-idle'],
    dnsServers: Number(values['dns-servers'] ?? n),
    builds,
    runs: Number(values.runs),
  });
