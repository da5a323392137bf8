// A cold start of the operator over many workload clusters (real API servers,
// test/testenv): a loadBalancer GatewayDNS and a headless GatewayDNS (10 pods
// a cluster) over every cluster, no DNSRecordSet anywhere yet, then the
// operator starts. Measured until both GatewayDNS are Ready: the time, the
// record sets written, the requests that timed out ("no answer within") and
// the reconciles that failed and were retried. Each build given (this one
// and, with --reference, another, e.g. main's) starts cold in turn on the
// same clusters, interleaved run by run; the record sets are deleted between
// runs.
//
//   node dist/bench/cold-start.js [--clusters 10,25,40] [--runs 2] [--reference ../ref/dist]
//                                 [--variant "wide=--max-concurrent-writes 128"] [--rest 60]
//
// With --rest S, each cold start is followed by S seconds at rest (nothing changes): every request
// the API servers count, by verb and resource, the operator's CPU, resident memory and sockets; and
// once per fleet the same S seconds with no operator, so that what the operator adds is printed
// apart from what the API servers and Cluster API do by themselves (the goal: nothing but watches).
//
// (the reference's dist must resolve node_modules: a worktree with node_modules linked in does)
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { DNSRECORDSET_PLURAL, GATEWAYDNS_PLURAL, GROUP, VERSION } from '../api/index.js';
import { ensureNamespace } from '../test/support/capi.js';
import { writeEndpointSlice } from '../test/support/endpointslices.js';
import { apply, eventually } from '../test/support/kube.js';
import { metricsAt, setLoadBalancer } from '../test/support/operator.js';
import { freePort } from '../test/support/dns.js';
import { prepareClusters } from '../test/support/prepare.js';
import { repoRoot } from '../test/support/paths.js';
import { stopChild } from '../test/support/stop-child.js';
import { TestEnv } from '../test/support/testenv.js';
import { loadAverage, machine } from './dns-load.js';
import { measureRest, OPERATOR_RESOURCES, writeRequests, type AtRest } from './apiserver-requests.js';
import { sumMetric } from '../test/support/metrics.js';

const NS = 'fleet';
const APPS = 'apps';
const RECORDS_NS = 'capi-dns';

const { values } = parseArgs({
  options: {
    clusters: { type: 'string', default: '10,25,40' },
    runs: { type: 'string', default: '2' },
    // Cold starts to run and not count first: the first one after the clusters start pays the
    // API servers' own warm-up (and would fall to whichever build comes first).
    warmup: { type: 'string', default: '1' },
    // Seconds to stay at rest after each cold start, counting every API request, the operator's CPU,
    // memory and sockets; then as long again with no operator (what the clusters do by themselves).
    rest: { type: 'string', default: '0' },
    reference: { type: 'string' },
    // NAME=FLAGS: this build once more, with these operator flags (e.g. "wide=--max-concurrent-writes 128").
    variant: { type: 'string', multiple: true, default: [] },
  },
});
const restSeconds = Number(values.rest);
interface Build {
  name: string;
  dist: string;
  flags: string[];
}
const builds: Build[] = [{ name: 'this', dist: path.join(repoRoot(), 'dist'), flags: [] }];
for (const v of values.variant!) {
  const [name, flags] = v.split(/=(.*)/s);
  builds.push({ name: name!, dist: builds[0]!.dist, flags: (flags ?? '').split(/\s+/).filter(Boolean) });
}
if (values.reference) builds.push({ name: 'reference', dist: path.resolve(values.reference), flags: [] });

interface ColdStart {
  ms: number;
  rest?: AtRest;
  /** Writes of record sets and EndpointSlices the workload API servers counted, in all. */
  requests: number;
  written: number;
  timeouts: number;
  failedReconciles: number;
}

async function coldStart(env: TestEnv, names: string[], { dist, flags }: Build): Promise<ColdStart> {
  const requestsBefore = await writeRequests(env, names);
  const health = `127.0.0.1:${await freePort()}`;
  const child = spawn(
    process.execPath,
    [
      path.join(dist, 'operator', 'main.js'),
      '--kubeconfig',
      env.cluster('management').kubeconfig,
      '--health-listen',
      health,
      '--namespace',
      NS,
      '--no-leader-elect',
      '--no-manage-corefiles',
      ...flags,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let timeouts = 0;
  readline.createInterface({ input: child.stderr! }).on('line', (line) => {
    timeouts += line.split('no answer within').length - 1;
  });
  const began = Date.now();
  try {
    const custom = env.kubeConfig('management').makeApiClient(CustomObjectsApi);
    const ready = async (name: string) => {
      const g = (await custom.getNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: NS,
        plural: GATEWAYDNS_PLURAL,
        name,
      })) as {
        metadata: { generation: number };
        status?: {
          observedGeneration?: number;
          conditions?: { type: string; status: string; message?: string }[];
        };
      };
      const r = g.status?.conditions?.find((c) => c.type === 'Ready');
      if (g.status?.observedGeneration !== g.metadata.generation || r?.status !== 'True')
        throw new Error(`${name}: Ready ${r?.status} ${r?.message ?? ''}`);
    };
    await eventually(() => Promise.all([ready('gateway'), ready('db')]), 600_000, 200);
    const ms = Date.now() - began;
    const m = await metricsAt(health);
    // Settled first: the last status writes and the watches' first events are part of the start.
    let rest: AtRest | undefined;
    if (restSeconds > 0) {
      await new Promise((r) => setTimeout(r, 5000));
      rest = await measureRest(env, names, restSeconds, child.pid ? [child.pid] : []);
    }
    return {
      ms,
      ...(rest ? { rest } : {}),
      requests: (await writeRequests(env, names)) - requestsBefore,
      written: m['capi_dns_recordsets_written_total'] ?? NaN,
      timeouts,
      failedReconciles: sumMetric(m, 'controller_runtime_reconcile_errors_total', {
        controller: 'gatewaydns',
      }),
    };
  } finally {
    await stopChild(child, 10_000);
  }
}

function gatewayDns(body: { metadata: { name: string; namespace: string }; spec: object }): KubernetesObject {
  return { apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1', kind: 'GatewayDNS', ...body };
}

// A run starts from nothing written: no record set in any cluster and no
// status, so that Ready can only come from the operator under test.
async function clearOutputs(env: TestEnv, names: string[], gateways: string[]): Promise<void> {
  const management = env.kubeConfig('management').makeApiClient(CustomObjectsApi);
  for (const name of gateways)
    await management.patchNamespacedCustomObjectStatus(
      {
        group: GROUP,
        version: VERSION,
        namespace: NS,
        plural: GATEWAYDNS_PLURAL,
        name,
        body: { status: null },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  await Promise.all(
    names.map(async (name) => {
      const custom = env.kubeConfig(name).makeApiClient(CustomObjectsApi);
      await custom.deleteCollectionNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: RECORDS_NS,
        plural: DNSRECORDSET_PLURAL,
      });
    }),
  );
}

async function fleet(count: number, runs: number): Promise<void> {
  const names = Array.from({ length: count }, (_, i) => `c${String(i + 1).padStart(3, '0')}`);
  const began = Date.now();
  const env = await TestEnv.start({ workloadClusters: names });
  const rests: { build: string; run: number; rest: AtRest }[] = [];
  try {
    await prepareClusters(env, { namespace: NS, workloads: names, recordsNamespace: RECORDS_NS });
    for (const [c, name] of names.entries()) {
      const kc = env.kubeConfig(name);
      await ensureNamespace(kc, APPS);
      await setLoadBalancer(kc, APPS, 'envoy', [{ ip: `172.16.${c >> 8}.${c & 255}` }]);
      await kc.makeApiClient(CoreV1Api).createNamespacedService({
        namespace: APPS,
        body: {
          metadata: { name: 'db' },
          spec: { clusterIP: 'None', selector: { app: 'db' }, ports: [{ name: 'pg', port: 5432 }] },
        },
      });
      await writeEndpointSlice(kc, {
        namespace: APPS,
        service: 'db',
        name: 'db-x',
        addressType: 'IPv4',
        endpoints: Array.from({ length: 10 }, (_, i) => ({
          pod: `db-${i}`,
          address: `10.${100 + (c % 100)}.${c >> 8}.${i}`,
          hostname: `db-${i}`,
          ready: true,
        })),
        ports: [{ name: 'pg', port: 5432 }],
      });
    }
    await apply(env.kubeConfig('management'), [
      gatewayDns({
        metadata: { name: 'gateway', namespace: NS },
        spec: { clusterSelector: {}, service: `${APPS}/envoy`, resolutionType: 'loadBalancer' },
      }),
      gatewayDns({
        metadata: { name: 'db', namespace: NS },
        spec: { clusterSelector: {}, service: `${APPS}/db`, resolutionType: 'headless', gatewayLabel: 'db' },
      }),
    ]);
    process.stderr.write(`${count} workload clusters ready in ${Date.now() - began} ms\n`);
    for (let run = 0; run < Number(values.warmup); run++) {
      await clearOutputs(env, names, ['gateway', 'db']);
      await coldStart(env, names, builds[0]!);
    }
    for (let run = 1; run <= runs; run++)
      for (const build of run % 2 === 1 ? builds : [...builds].reverse()) {
        await clearOutputs(env, names, ['gateway', 'db']);
        const r = await coldStart(env, names, build);
        console.log(
          `${String(count).padStart(8)}  ${build.name.padEnd(10)} ${String(run).padStart(3)}  ${String(r.ms).padStart(9)}  ${String(r.written).padStart(12)}  ${String(r.requests).padStart(14)}  ${String(r.timeouts).padStart(8)}  ${String(r.failedReconciles).padStart(17)}   (${loadAverage()})`,
        );
        if (r.rest) rests.push({ build: build.name, run, rest: r.rest });
      }
    if (restSeconds > 0) {
      // The same window with no operator: the API servers' own controllers and Cluster API's.
      const baseline = await measureRest(env, names, restSeconds);
      const perMinute = (n: number, seconds: number) => (n * 60) / seconds / count;
      const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
      console.log(
        `    at rest, ${restSeconds} s after each cold start; requests per minute per cluster for what the operator reads or writes, beyond the ${perMinute(total(baseline.requests), restSeconds).toFixed(1)} a minute per cluster that the clusters make with no operator running:`,
      );
      for (const { build, run, rest } of rests) {
        const extra = new Map<string, number>();
        for (const [k, v] of rest.requests) {
          const beyond = v - (baseline.requests.get(k) ?? 0);
          // Of the resources the operator reads or writes: the API servers renew their own internal
          // watches (leases, RBAC, webhooks) on their own schedule, which no subtraction lines up.
          if (beyond > 0 && OPERATOR_RESOURCES.has(k.split(' ')[1] ?? '')) extra.set(k, beyond);
        }
        const detail = [...extra]
          .filter(([, v]) => perMinute(v, restSeconds) >= 0.05)
          .sort((a, b) => b[1] - a[1])
          .map(([k, v]) => `${k} ${perMinute(v, restSeconds).toFixed(2)}`)
          .join(', ');
        console.log(
          `    ${build} run ${run}: ${perMinute(total(extra), restSeconds).toFixed(2)} a minute per cluster (${detail || 'none'}); operator CPU ${((rest.cpuSeconds * 60) / restSeconds).toFixed(2)} s a minute, resident ${rest.rssMb.toFixed(0)} MB, ${rest.sockets} sockets (${(rest.sockets / count).toFixed(2)} per cluster)`,
        );
      }
    }
  } finally {
    await env.stop();
  }
}

console.log(machine());
console.log('clusters  build      run  ready ms  sets written  write requests  timeouts  failed reconciles');
for (const count of values.clusters!.split(',').map(Number)) await fleet(count, Number(values.runs));
