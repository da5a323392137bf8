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
//   npm run build && node dist/bench/endpoint-propagation.js [--clusters 10] [--pods 100] [--changes 40] [--mirror] [--local-first]
//     [--build-worker-idle 0s]   (the dns-servers' flag: 0s is a fresh build thread per rebuild, as before ADR 0103)
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import {
  CoreV1Api,
  DiscoveryV1Api,
  makeInformer,
  type KubernetesObject,
  type V1EndpointSlice,
} from '@kubernetes/client-node';
import { ensureNamespace } from '../test/support/capi.js';
import { exchange, startDnsServer, type DnsProcess } from '../test/support/dns.js';
import { writeEndpointSlice, type TestEndpoint } from '../test/support/endpointslices.js';
import { apply, eventually, startRestarting } from '../test/support/kube.js';
import { metricsAt, readRecordSet, startOperator } from '../test/support/operator.js';
import { prepareClusters } from '../test/support/prepare.js';
import { TestEnv } from '../test/support/testenv.js';

const NS = 'bench';
const APPS = 'apps';
const MIRROR_NS = 'mirror';
const NAME = `db.${NS}.clusters.xcc.test`;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

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

async function run(
  clusterCount: number,
  podCount: number,
  changes: number,
  mirror: boolean,
  localFirst: boolean,
  buildWorkerIdle: string | undefined,
): Promise<void> {
  const names = Array.from({ length: clusterCount }, (_, i) => `cluster-${i + 1}`);
  const began = Date.now();
  const env = await TestEnv.start({ workloadClusters: names });
  const servers: DnsProcess[] = [];
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
      // Its "serving" line (info) is how the helper knows it is up: no --log-level warn here.
      servers.push(
        await startDnsServer([
          '--zone',
          'xcc.test',
          '--kubeconfig',
          env.cluster(name).kubeconfig,
          ...(buildWorkerIdle ? ['--build-worker-idle', buildWorkerIdle] : []),
        ]),
      );
    }
    process.stderr.write(`${clusterCount} workload clusters ready in ${Date.now() - began} ms\n`);
    op = await startOperator(env.cluster('management').kubeconfig, [
      '--namespace',
      NS,
      '--no-leader-elect',
      '--log-level',
      'warn',
    ]);
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
    // What server i is asked, and how many addresses it answers while the first cluster is (not) ready.
    const firstClusterName = `db.${names[0]}.${NS}.clusters.xcc.test`;
    const asked = (i: number) => (localFirst && i > 0 ? firstClusterName : NAME);
    const expected = (i: number, ready: boolean) =>
      !localFirst
        ? ready
          ? all
          : all - podCount
        : i > 0
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
    servers.forEach((s, i) =>
      readline.createInterface({ input: s.child.stderr! }).on('line', (line) => {
        if (line.includes('"zones rebuilt"')) for (const wake of rebuilt[i]!) wake();
      }),
    );
    const answeredEverywhere = (ready: boolean, timeoutMs: number) =>
      Promise.all(
        servers.map(async (s, i) => {
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
            const want = expected(i, ready);
            const got = await answerCount(s.port, asked(i)).catch(() => -1);
            if (got === want) return;
            if (performance.now() > deadline) throw new Error(`port ${s.port}: ${got} answers, want ${want}`);
            await woken;
          }
        }),
      );
    await answeredEverywhere(true, 60_000);
    const mirrors = mirror ? await watchMirrorSlices(env, names) : undefined;
    if (mirrors)
      await eventually(async () => {
        if (!names.every((n) => mirrors.readyIn.get(n) === podCount))
          throw new Error('mirrors not in place yet');
      }, 60_000);
    const sliceLatencies: number[] = [];

    const set = await readRecordSet(env.kubeConfig(names[0]!), `${NS}.db`);
    // A cluster whose pods all became unready has no set left: it is deleted, not written.
    const written = async () => {
      const m = await metricsAt(op!.health);
      return (m['capi_dns_recordsets_written_total'] ?? 0) + (m['capi_dns_recordsets_deleted_total'] ?? 0);
    };
    const reconciles = async () => (await metricsAt(op!.health))['capi_dns_reconciles_total'] ?? 0;
    const latencies: number[] = [];
    const writes: number[] = [];
    const reconcileCounts: number[] = [];
    // The operator's own share (change seen → record sets written everywhere), from its histogram:
    // what is left of the end-to-end figure is the dns-servers' watch, rebuild and answer.
    const operatorSeconds = async () => {
      const m = await metricsAt(op!.health);
      return {
        sum: m['capi_dns_propagation_latency_seconds_sum'] ?? 0,
        count: m['capi_dns_propagation_latency_seconds_count'] ?? 0,
      };
    };
    const operatorBefore = await operatorSeconds();
    for (let i = 1; i <= changes; i++) {
      const ready = i % 2 === 0;
      const before = await written();
      const reconcilesBefore = await reconciles();
      const t0 = performance.now();
      await slice(0, ready);
      await answeredEverywhere(ready, 30_000);
      latencies.push(performance.now() - t0);
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
        sliceLatencies.push(Math.max(...names.map((n) => mirrors.arrivals.get(`${n}|${want}`)!)) - t0);
        for (const n of names) mirrors.arrivals.delete(`${n}|${want}`);
      }
      // Let the reconcile finish its status write before counting.
      await new Promise((r) => setTimeout(r, 300));
      writes.push((await written()) - before);
      reconcileCounts.push((await reconciles()) - reconcilesBefore);
    }
    const operatorAfter = await operatorSeconds();
    const operatorMeanMs =
      (1000 * (operatorAfter.sum - operatorBefore.sum)) /
      Math.max(1, operatorAfter.count - operatorBefore.count);
    // An event that changes nothing the GatewayDNS publishes: the slice's pods on another node.
    const beforeNoop = await written();
    await slice(1, true, 'node-2');
    await new Promise((r) => setTimeout(r, 1000));
    const noopWrites = (await written()) - beforeNoop;

    await mirrors?.stop();
    latencies.sort((a, b) => a - b);
    sliceLatencies.sort((a, b) => a - b);
    const f = (ms: number) => `${ms.toFixed(0)} ms`;
    process.stdout.write(
      [
        `${clusterCount} clusters x ${podCount} pods (${all} endpoints), answer ${localFirst ? 'localFirst' : 'all'}, dns-server --build-worker-idle ${buildWorkerIdle ?? 'default'}, ${changes} readiness changes of ${podCount} pods in one cluster:`,
        `  answer in every cluster: p50 ${f(percentile(latencies, 50))}  p99 ${f(percentile(latencies, 99))}  min ${f(latencies[0]!)}  max ${f(latencies[latencies.length - 1]!)}`,
        `  of which the operator (change seen → written in every cluster), mean: ${f(operatorMeanMs)}; end to end, mean: ${f(latencies.reduce((a, b) => a + b, 0) / latencies.length)}`,
        `  record set: ${set?.spec.records.length} records, ${Buffer.byteLength(JSON.stringify(set?.spec))} octets of spec (JSON)`,
        `  record-set writes and deletes per change: ${writes.join(' ')} (${clusterCount} clusters)`,
        `  reconciles per change: ${reconcileCounts.join(' ')} (the operator's own writes coming back as events need none)`,
        `  record-set writes and deletes for a slice event that changes nothing: ${noopWrites}`,
        ...(mirror
          ? [
              `  EndpointSlice path (mirror slice of the changed cluster in every cluster): p50 ${f(percentile(sliceLatencies, 50))}  p99 ${f(percentile(sliceLatencies, 99))}  min ${f(sliceLatencies[0]!)}  max ${f(sliceLatencies[sliceLatencies.length - 1]!)}`,
            ]
          : []),
        '',
      ].join('\n'),
    );
  } finally {
    await op?.stop();
    await Promise.all(servers.map((s) => s.stop()));
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
  },
});
for (const n of values.clusters.split(',').map(Number))
  await run(
    n,
    Number(values.pods),
    Number(values.changes),
    values.mirror,
    values['local-first'],
    values['build-worker-idle'],
  );
