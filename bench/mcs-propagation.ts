// Multi-Cluster Services propagation (issue 17, item 6) on real API servers
// (test/testenv) with the operator and one dns-server per member cluster as
// child processes, C member clusters of one ClusterSet:
// - export: a Service with one ready pod in the first cluster gets a
//   ServiceExport; timed until EVERY member has its ServiceImport (a watch in
//   each), and until EVERY member's dns-server answers
//   <svc>.apps.svc.clusterset.local with its ClusterSet IP;
// - unready: one pod of a headless Service exported from the first cluster
//   (P pods) turns unready in one EndpointSlice write; timed until EVERY
//   member's dns-server no longer answers it under clusterset.local, and, as
//   the reference in the same run and the same change, until every member
//   answers the same Service's GatewayDNS headless name (xcc.test) without it;
// - export-to (ADR 0210): the same export to the second half of the members
//   only (a Cluster label), interleaved with the whole-set ones; timed until
//   each member it reaches has the import, and checked that no other has;
// - writes per change (capi_dns_workload_writes_total), and writes after an
//   operator restart (should be 0).
// The dns-servers are asked every 20 ms over TCP (cheap: a precomputed answer).
//
//   npm run build && node dist/bench/mcs-propagation.js [--clusters 2] [--changes 20] [--pods 10]
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  CoreV1Api,
  CustomObjectsApi,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { CLUSTER_API, ensureNamespace } from '../test/support/capi.js';
import { addressesAt as addresses, startDnsServer, type DnsProcess } from '../test/support/dns.js';
import { writeEndpointSlice, type TestEndpoint } from '../test/support/endpointslices.js';
import { apply, eventually, installCrds, readManifests, startRestarting } from '../test/support/kube.js';
import { metricsAt, startOperator } from '../test/support/operator.js';
import { prepareClusters } from '../test/support/prepare.js';
import { repoRoot } from '../test/support/paths.js';
import { TestEnv } from '../test/support/testenv.js';
import { percentile } from './rank.js';
import { MCS_API_VERSION, MCS_EXPORT_TO_ANNOTATION, MCS_GROUP, MCS_VERSION } from '../api/index.js';

const NS = 'bench';
const APPS = 'apps';
const MCS = { group: MCS_GROUP, version: MCS_VERSION };

function summary(label: string, ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  return `${label.padEnd(44)} p50 ${percentile(s, 50).toFixed(0).padStart(5)} ms  p99 ${percentile(s, 99).toFixed(0).padStart(5)} ms  max ${(s[s.length - 1] ?? NaN).toFixed(0).padStart(5)} ms  (n=${s.length})`;
}

/** Resolves with the time when check() first holds, polling every 20 ms. */
async function until(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return performance.now();
    if (performance.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

function pods(count: number, readyExcept: number): TestEndpoint[] {
  return Array.from({ length: count }, (_, i) => ({
    pod: `db-${i}`,
    address: `10.100.0.${i + 1}`,
    hostname: `db-${i}`,
    ready: i !== readyExcept,
  }));
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      clusters: { type: 'string', default: '2' },
      changes: { type: 'string', default: '20' },
      pods: { type: 'string', default: '10' },
    },
  });
  const clusterCount = Number(values.clusters);
  const changes = Number(values.changes);
  const podCount = Number(values.pods);
  const names = Array.from({ length: clusterCount }, (_, i) => `member-${i + 1}`);
  const env = await TestEnv.start({ workloadClusters: names });
  const servers = new Map<string, DnsProcess>();
  let op: Awaited<ReturnType<typeof startOperator>> | undefined;
  const stops: (() => Promise<void>)[] = [];
  try {
    await prepareClusters(env, { namespace: NS, workloads: names, recordsNamespace: 'capi-dns' });
    const management = env.kubeConfig('management');
    for (const name of names) {
      const kc = env.kubeConfig(name);
      await installCrds(kc, readManifests(path.join(repoRoot(), 'crds', 'mcs')));
      await ensureNamespace(kc, APPS);
      servers.set(
        name,
        await startDnsServer(['--zone', 'xcc.test', '--kubeconfig', env.cluster(name).kubeconfig]),
      );
    }
    await management
      .makeApiClient(CoreV1Api)
      .patchNamespace(
        { name: NS, body: { metadata: { labels: { 'multicluster.x-k8s.io/clusterset': 'bench' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    const first = names[0]!;
    const firstKc = env.kubeConfig(first);
    const core = firstKc.makeApiClient(CoreV1Api);
    const custom = firstKc.makeApiClient(CustomObjectsApi);
    const exportService = (name: string, exportTo?: string) =>
      custom.createNamespacedCustomObject({
        ...MCS,
        namespace: APPS,
        plural: 'serviceexports',
        body: {
          apiVersion: MCS_API_VERSION,
          kind: 'ServiceExport',
          metadata: {
            name,
            ...(exportTo !== undefined ? { annotations: { [MCS_EXPORT_TO_ANNOTATION]: exportTo } } : {}),
          },
        },
      });
    // The subset case (the export-to annotation): the second half of the members, by a Cluster label.
    const subset = names.filter((_, i) => i >= Math.floor(names.length / 2));
    for (const name of subset)
      await management
        .makeApiClient(CustomObjectsApi)
        .patchNamespacedCustomObject(
          { ...CLUSTER_API, namespace: NS, name, body: { metadata: { labels: { half: 'b' } } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );

    // The headless Service db in the first cluster: exported (MCS) and named by a GatewayDNS (reference).
    await core.createNamespacedService({
      namespace: APPS,
      body: {
        metadata: { name: 'db' },
        spec: { clusterIP: 'None', ports: [{ name: 'pg', port: 5432 }], selector: { app: 'db' } },
      },
    });
    const dbSlice = (unready: number) =>
      writeEndpointSlice(firstKc, {
        namespace: APPS,
        service: 'db',
        name: 'db-x',
        addressType: 'IPv4',
        endpoints: pods(podCount, unready),
        ports: [{ name: 'pg', port: 5432 }],
      });
    await dbSlice(-1);
    await apply(management, [
      {
        apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
        kind: 'GatewayDNS',
        metadata: { name: 'db', namespace: NS },
        spec: { clusterSelector: {}, service: `${APPS}/db`, resolutionType: 'headless', gatewayLabel: 'db' },
      } as KubernetesObject,
    ]);

    op = await startOperator(env.cluster('management').kubeconfig, [
      '--no-leader-elect',
      '--no-manage-corefiles',
    ]);
    const health = op.health;
    const writes = async () => (await metricsAt(health)).capi_dns_workload_writes_total ?? 0;
    await exportService('db');
    const clustersetName = `db.${APPS}.svc.clusterset.local`;
    // The cluster-independent name of every ready pod (a wildcard; endpoint-propagation asks it the same way).
    const gatewayName = `x.db.${NS}.clusters.xcc.test`;
    const all = [...servers.values()];
    await eventually(
      async () => {
        for (const s of all) {
          if ((await addresses(s.port, clustersetName)).length !== podCount)
            throw new Error('clusterset not ready');
          if ((await addresses(s.port, gatewayName)).length !== podCount)
            throw new Error('xcc.test not ready');
        }
      },
      60_000,
      200,
    );

    // ServiceImports as every member's watch sees them.
    const importedAt = new Map<string, number>();
    for (const name of names) {
      const kc = env.kubeConfig(name);
      const api = kc.makeApiClient(CustomObjectsApi);
      const informer = makeInformer<KubernetesObject>(
        kc,
        `/apis/${MCS.group}/${MCS.version}/serviceimports`,
        () => api.listClusterCustomObject({ ...MCS, plural: 'serviceimports' }) as never,
      );
      informer.on('add', (o) =>
        importedAt.set(`${name}|${o.metadata?.namespace}/${o.metadata?.name}`, performance.now()),
      );
      stops.push(await startRestarting(informer));
    }

    const exportMs: number[] = [];
    const exportDnsMs: number[] = [];
    const exportWrites: number[] = [];
    const subsetMs: number[] = [];
    const subsetWrites: number[] = [];
    for (let i = 0; i < changes * 2; i++) {
      // Interleaved: even changes export to the whole ClusterSet, odd ones to the subset.
      const toSubset = i % 2 === 1;
      const reached = toSubset ? subset : names;
      const svc = `web-${i}`;
      await core.createNamespacedService({
        namespace: APPS,
        body: {
          metadata: { name: svc },
          spec: { ports: [{ name: 'http', port: 80 }], selector: { app: svc } },
        },
      });
      await writeEndpointSlice(firstKc, {
        namespace: APPS,
        service: svc,
        name: `${svc}-x`,
        addressType: 'IPv4',
        endpoints: [{ pod: `${svc}-0`, address: `10.101.0.${i + 1}` }],
        ports: [{ name: 'http', port: 8080 }],
      });
      await new Promise((r) => setTimeout(r, 300));
      const before = await writes();
      const t0 = performance.now();
      await exportService(svc, toSubset ? 'half=b' : undefined);
      await until(async () => reached.every((n) => importedAt.has(`${n}|${APPS}/${svc}`)));
      const reachedServers = reached.map((n) => servers.get(n)!);
      const answered = await until(async () => {
        for (const s of reachedServers)
          if ((await addresses(s.port, `${svc}.${APPS}.svc.clusterset.local`)).length !== 1) return false;
        return true;
      });
      const importedMs = Math.max(...reached.map((n) => importedAt.get(`${n}|${APPS}/${svc}`)!)) - t0;
      await new Promise((r) => setTimeout(r, 500));
      const written = (await writes()) - before;
      if (toSubset) {
        const outside = names.filter((n) => !subset.includes(n) && importedAt.has(`${n}|${APPS}/${svc}`));
        if (outside.length) throw new Error(`${svc} imported outside its subset: ${outside.join(', ')}`);
        subsetMs.push(importedMs);
        subsetWrites.push(written);
      } else {
        exportMs.push(importedMs);
        exportDnsMs.push(answered - t0);
        exportWrites.push(written);
      }
    }

    const unreadyMs: number[] = [];
    const referenceMs: number[] = [];
    const unreadyWrites: number[] = [];
    for (let i = 0; i < changes; i++) {
      const victim = i % podCount;
      const gone = `10.100.0.${victim + 1}`;
      await dbSlice(-1);
      await until(async () => {
        for (const s of all) {
          if (!(await addresses(s.port, clustersetName)).includes(gone)) return false;
          if (!(await addresses(s.port, gatewayName)).includes(gone)) return false;
        }
        return true;
      });
      await new Promise((r) => setTimeout(r, 300));
      const before = await writes();
      const t0 = performance.now();
      await dbSlice(victim);
      const [mcs, reference] = await Promise.all([
        until(async () => {
          for (const s of all) if ((await addresses(s.port, clustersetName)).includes(gone)) return false;
          return true;
        }),
        until(async () => {
          for (const s of all) if ((await addresses(s.port, gatewayName)).includes(gone)) return false;
          return true;
        }),
      ]);
      unreadyMs.push(mcs - t0);
      referenceMs.push(reference - t0);
      await new Promise((r) => setTimeout(r, 500));
      unreadyWrites.push((await writes()) - before);
    }

    await op.stop();
    op = await startOperator(env.cluster('management').kubeconfig, [
      '--no-leader-elect',
      '--no-manage-corefiles',
    ]);
    await new Promise((r) => setTimeout(r, 5000));
    const afterRestart = (await metricsAt(op.health)).capi_dns_workload_writes_total ?? 0;

    const out = process.stdout;
    out.write(
      `\nMulti-Cluster Services propagation: ${clusterCount} member clusters, ${changes} changes, headless db of ${podCount} pods\n`,
    );
    out.write(`${summary('ServiceExport → ServiceImport in every member', exportMs)}\n`);
    out.write(`${summary('ServiceExport → clusterset.local in every member', exportDnsMs)}\n`);
    out.write(
      `${summary(`  export-to ${subset.length} of ${clusterCount} → ServiceImport in each`, subsetMs)}\n`,
    );
    out.write(`${summary('pod unready → gone from clusterset.local', unreadyMs)}\n`);
    out.write(`${summary('  reference: same change, GatewayDNS headless', referenceMs)}\n`);
    const ratio =
      percentile(
        [...unreadyMs].sort((a, b) => a - b),
        50,
      ) /
      percentile(
        [...referenceMs].sort((a, b) => a - b),
        50,
      );
    out.write(`unready p50 ratio MCS / GatewayDNS: ${ratio.toFixed(2)}\n`);
    out.write(`writes per export: ${exportWrites.join(' ')}\n`);
    out.write(`writes per export to ${subset.length} of ${clusterCount}: ${subsetWrites.join(' ')}\n`);
    out.write(
      `writes per unready change (MCS slices and record sets together): ${unreadyWrites.join(' ')}\n`,
    );
    out.write(`writes in the 5 s after an operator restart: ${afterRestart}\n`);
  } finally {
    await Promise.all(stops.map((s) => s()));
    await op?.stop();
    await Promise.all([...servers.values()].map((s) => s.stop()));
    await env.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(
    `mcs-propagation: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
