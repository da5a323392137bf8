// Gateway API route propagation (issue 35, item 5) on real API servers
// (test/testenv, the Gateway API v1.6.3 CRDs in every workload cluster) with
// the operator and one dns-server per workload cluster as child processes:
// - route: an HTTPRoute with a new host name in one cluster (round robin),
//   accepted by that cluster's Gateway (its status.parents written as a
//   Gateway controller writes it); timed from the status write until EVERY
//   cluster's dns-server answers the name with that Gateway's address;
// - reference, interleaved with it: the same GatewayDNS machinery fed by a
//   Service (a LoadBalancer status change in one cluster, as a cloud
//   controller writes it), timed until every dns-server answers the new address;
// - writes per change (capi_dns_workload_writes_total); writes while nothing
//   changes for 5 s; writes in the 5 s after an operator restart (should be 0).
// The dns-servers are asked every 20 ms over TCP (a precomputed answer).
//
//   npm run build && node dist/bench/gateway-routes.js [--clusters 10] [--changes 20]
import os from 'node:os';
import { parseArgs } from 'node:util';
import type { KubernetesObject } from '@kubernetes/client-node';
import { addressesAt, startDnsServer, type DnsProcess } from '../test/support/dns.js';
import {
  ensureGatewayClass,
  setGatewayStatus,
  setRouteParents,
  writeGateway,
  writeRoute,
} from '../test/support/gateway-api.js';
import { apply, eventually } from '../test/support/kube.js';
import { metricsAt, setLoadBalancer, startOperator } from '../test/support/operator.js';
import { sumMetric } from '../test/support/metrics.js';
import { prepareClusters } from '../test/support/prepare.js';
import { TestEnv } from '../test/support/testenv.js';
import { percentile } from './rank.js';

const NS = 'bench';
const ZONE = 'apps.corp.internal';
const EDGE = { namespace: 'infra', name: 'edge' };

function summary(label: string, ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  return `${label.padEnd(48)} p50 ${percentile(s, 50).toFixed(0).padStart(5)} ms  p99 ${percentile(s, 99).toFixed(0).padStart(5)} ms  max ${(s[s.length - 1] ?? NaN).toFixed(0).padStart(5)} ms  (n=${s.length})`;
}

/** The time when every dns-server answers `name` with exactly `want`, polling each every 20 ms. */
async function answeredEverywhere(
  servers: DnsProcess[],
  name: string,
  want: string[],
  timeoutMs = 30_000,
): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  const pending = new Set(servers);
  for (;;) {
    for (const s of [...pending]) {
      const got = await addressesAt(s.port, name).catch(() => []);
      if (got.sort().join() === [...want].sort().join()) pending.delete(s);
    }
    if (!pending.size) return performance.now();
    if (performance.now() > deadline)
      throw new Error(`${name}: not answered everywhere within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { clusters: { type: 'string', default: '10' }, changes: { type: 'string', default: '20' } },
  });
  const clusterCount = Number(values.clusters);
  const changes = Number(values.changes);
  const names = Array.from({ length: clusterCount }, (_, i) => `cluster-${i + 1}`);
  const gatewayAddress = (i: number) => `127.0.60.${i + 1}`;
  const began = Date.now();
  const env = await TestEnv.start({ workloadClusters: names });
  const servers: DnsProcess[] = [];
  let op: Awaited<ReturnType<typeof startOperator>> | undefined;
  try {
    await prepareClusters(env, {
      namespace: NS,
      workloads: names,
      recordsNamespace: 'capi-dns',
      gatewayApi: 'standard',
    });
    for (const [i, name] of names.entries()) {
      const kc = env.kubeConfig(name);
      await ensureGatewayClass(kc);
      await writeGateway(kc, EDGE.namespace, EDGE.name, [
        { name: 'https', port: 443, protocol: 'HTTPS', hostname: `*.${ZONE}` },
      ]);
      await setGatewayStatus(kc, EDGE.namespace, EDGE.name, {
        programmed: true,
        addresses: [gatewayAddress(i)],
      });
      servers.push(
        await startDnsServer([
          '--zone',
          'xcc.test',
          '--zone',
          ZONE,
          '--kubeconfig',
          env.cluster(name).kubeconfig,
        ]),
      );
    }
    const source = env.kubeConfig(names[0]!);
    await setLoadBalancer(source, 'gw', 'envoy', [{ ip: '127.0.61.0' }]);
    const management = env.kubeConfig('management');
    const operatorArgs = ['--namespace', NS, '--no-leader-elect', '--no-manage-corefiles', '--zone', ZONE];
    op = await startOperator(env.cluster('management').kubeconfig, operatorArgs);
    await apply(management, [
      {
        apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
        kind: 'GatewayDNS',
        metadata: { name: 'edge', namespace: NS },
        spec: { clusterSelector: {}, gatewayRef: EDGE },
      },
      {
        apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
        kind: 'GatewayDNS',
        metadata: { name: 'svc', namespace: NS },
        spec: { clusterSelector: {}, service: 'gw/envoy', gatewayLabel: 'svc' },
      },
    ] as unknown as KubernetesObject[]);
    await answeredEverywhere(
      servers,
      `x.gateway.${NS}.clusters.xcc.test`,
      names.map((_, i) => gatewayAddress(i)),
      120_000,
    );
    await answeredEverywhere(servers, `x.svc.${NS}.clusters.xcc.test`, ['127.0.61.0'], 60_000);
    process.stderr.write(`${clusterCount} workload clusters ready in ${Date.now() - began} ms\n`);
    const health = op.health;
    const writes = async () => (await metricsAt(health)).capi_dns_workload_writes_total ?? 0;

    const routeMs: number[] = [];
    const routeWrites: number[] = [];
    const referenceMs: number[] = [];
    const referenceWrites: number[] = [];
    for (let i = 0; i < changes; i++) {
      // The route, in cluster i (round robin).
      const at = i % clusterCount;
      const kc = env.kubeConfig(names[at]!);
      const host = `r${i}.${ZONE}`;
      await writeRoute(kc, 'HTTPRoute', 'shop', `r${i}`, { hostnames: [host], parentRefs: [EDGE] });
      let before = await writes();
      let t0 = performance.now();
      await setRouteParents(kc, 'HTTPRoute', 'shop', `r${i}`, [{ parentRef: EDGE, accepted: true }]);
      routeMs.push((await answeredEverywhere(servers, host, [gatewayAddress(at)])) - t0);
      await new Promise((r) => setTimeout(r, 200));
      routeWrites.push((await writes()) - before);
      // The reference: a Service's address changes in the first cluster.
      const ip = `127.0.62.${i + 1}`;
      before = await writes();
      t0 = performance.now();
      await setLoadBalancer(source, 'gw', 'envoy', [{ ip }]);
      referenceMs.push((await answeredEverywhere(servers, `x.svc.${NS}.clusters.xcc.test`, [ip])) - t0);
      await new Promise((r) => setTimeout(r, 200));
      referenceWrites.push((await writes()) - before);
    }
    const restBefore = await writes();
    await new Promise((r) => setTimeout(r, 5000));
    const atRest = (await writes()) - restBefore;
    await op.stop();
    op = await startOperator(env.cluster('management').kubeconfig, operatorArgs);
    await eventually(async () => {
      const m = await metricsAt(op!.health);
      if (!sumMetric(m, 'controller_runtime_reconcile_total', { controller: 'gatewaydns' }))
        throw new Error('no reconcile yet');
    }, 30_000);
    await new Promise((r) => setTimeout(r, 5000));
    const afterRestart = (await metricsAt(op.health)).capi_dns_workload_writes_total ?? 0;

    const out = process.stdout;
    out.write(
      `\nGateway API route propagation: ${clusterCount} workload clusters, ${changes} changes each; ${os.cpus()[0]?.model}, ${os.cpus().length} cores, Linux ${os.release()}, Node ${process.version}, load ${os.loadavg()[0]!.toFixed(1)}\n`,
    );
    out.write(`${summary('HTTPRoute accepted → answered in every cluster', routeMs)}\n`);
    out.write(`${summary('  reference: LoadBalancer status → every cluster', referenceMs)}\n`);
    const p50 = (ms: number[]) =>
      percentile(
        [...ms].sort((a, b) => a - b),
        50,
      );
    out.write(`route p50 / reference p50: ${(p50(routeMs) / p50(referenceMs)).toFixed(2)}\n`);
    out.write(`writes per route added: ${routeWrites.join(' ')}\n`);
    out.write(`writes per reference change: ${referenceWrites.join(' ')}\n`);
    out.write(`writes in 5 s with nothing changing: ${atRest}\n`);
    out.write(`writes in the 5 s after an operator restart: ${afterRestart}\n`);
  } finally {
    await op?.stop();
    await Promise.all(servers.map((s) => s.stop()));
    await env.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(
    `gateway-routes: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
