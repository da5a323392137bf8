// Failover benchmark of the traffic policy (issue 33, ADR 0209), printed beside
// the readiness path as its reference, in one run: real API servers
// (test/testenv), the operator, a dns-server and a real HTTP gateway (a process
// on its LoadBalancer address) per workload cluster.
//
//   npm run build && node dist/bench/failover.js [--clusters 10,50] [--changes 10] [--queries 10000]
//     [--qps-seconds 5] [--gatewaydns 100] [--rest 20]
//
// At each N:
//   - data path: c1's gateway process stopped → every dns-server answers the failover name without
//     c1 (answer failover, tiers [c1] then the others, HTTP check every 2 s, two failures); its
//     recovery likewise; p50/p99 over --changes, each the slowest of the N dns-servers.
//   - reference, the readiness path: c1's LoadBalancer ingress removed (as a cloud controller would)
//     → every dns-server answers the plain name (answer all, no check) without c1; and back.
//   - weights: c1 3, c2 1, the rest 0: shares of --queries answers of one dns-server.
//   - qps of one dns-server (dnsperf) on the weighted, health-checked name against a plain
//     per-cluster name, interleaved, two runs each.
//   - cost at rest of one dns-server: --gatewaydns GatewayDNS with checks (each its own path: its own
//     targets) against the same without checks: probes a second, CPU and memory over --rest s.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { decode, encode } from 'dns-packet';
import { ensureNamespace, registerWorkloadCluster, waitForClusterProvisioned } from '../test/support/capi.js';
import { addressesAt, exchange, freePort, startDnsServer, type DnsProcess } from '../test/support/dns.js';
import { startGateway, type GatewayProcess } from '../test/support/gateway.js';
import { apply, eventually, installCrds, readManifests } from '../test/support/kube.js';
import { metricsAt, setLoadBalancer, startOperator, type OperatorProcess } from '../test/support/operator.js';
import { repoRoot } from '../test/support/paths.js';
import { TestEnv } from '../test/support/testenv.js';
import { dnsperf, loadAverage, machine } from './dns-load.js';
import { cpuSeconds, memoryMb } from './proc.js';
import { percentile } from './rank.js';

const NS = 'bench';
const CHECK = {
  protocol: 'HTTP',
  path: '/healthz',
  periodSeconds: 2,
  timeoutSeconds: 1,
  failureThreshold: 2,
  successThreshold: 2,
};
const BOUND_MS = CHECK.failureThreshold * CHECK.periodSeconds * 1000 + 1000;
const name = (label: string) => `x.${label}.${NS}.clusters.xcc.test`;
const addressOf = (i: number) => `127.0.${70 + Math.floor(i / 250)}.${(i % 250) + 1}`;

function gatewayDns(metaName: string, spec: Record<string, unknown>) {
  return {
    apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
    kind: 'GatewayDNS',
    metadata: { name: metaName, namespace: NS },
    spec: { clusterSelector: {}, service: 'projectcontour/envoy', ...spec },
  };
}

async function run(
  n: number,
  opts: {
    changes: number;
    queries: number;
    qpsSeconds: number;
    gatewayDnsCount: number;
    restSeconds: number;
  },
) {
  const clusters = Array.from({ length: n }, (_, i) => `c${i + 1}`);
  const began = Date.now();
  const env = await TestEnv.start({ workloadClusters: clusters });
  const dns: DnsProcess[] = [];
  const gateways: (GatewayProcess | undefined)[] = [];
  let op: OperatorProcess | undefined;
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-failover-'));
  try {
    const management = env.kubeConfig('management');
    const ours = readManifests(path.join(repoRoot(), 'crds'));
    await installCrds(management, [...ours, ...readManifests(path.join(repoRoot(), 'test', 'fixtures'))]);
    const port = await freePort();
    await Promise.all(
      clusters.map(async (cluster, i) => {
        const kc = env.kubeConfig(cluster);
        await installCrds(kc, ours);
        await registerWorkloadCluster(management, {
          namespace: NS,
          cluster,
          kubeconfigPath: env.cluster(cluster).kubeconfig,
          labels: { region: i === 0 ? 'eu' : 'us', size: i === 0 ? 'large' : i === 1 ? 'medium' : 'small' },
        });
        await ensureNamespace(kc, 'capi-dns');
        gateways[i] = await startGateway(addressOf(i), port, { name: cluster });
        await setLoadBalancer(kc, 'projectcontour', 'envoy', [{ ip: addressOf(i) }]);
      }),
    );
    await Promise.all(clusters.map((c) => waitForClusterProvisioned(management, NS, c)));
    op = await startOperator(env.cluster('management').kubeconfig, [
      '--namespace',
      NS,
      '--no-leader-elect',
      '--no-manage-corefiles',
    ]);
    for (const cluster of clusters)
      dns.push(
        await startDnsServer(['--zone', 'xcc.test', '--kubeconfig', env.cluster(cluster).kubeconfig], {
          health: true,
        }),
      );
    const check = { ...CHECK, port };
    await apply(management, [
      gatewayDns('hc', {
        gatewayLabel: 'hc',
        ttl: 5,
        answer: 'failover',
        failover: [
          { clusterSelector: { matchLabels: { region: 'eu' } } },
          { clusterSelector: { matchLabels: { region: 'us' } } },
        ],
        healthCheck: check,
      }),
      gatewayDns('plain', { gatewayLabel: 'plain' }),
      gatewayDns('weighted', {
        gatewayLabel: 'weighted',
        weights: [
          { clusterSelector: { matchLabels: { size: 'large' } }, weight: 3 },
          { clusterSelector: { matchLabels: { size: 'medium' } }, weight: 1 },
          { clusterSelector: { matchLabels: { size: 'small' } }, weight: 0 },
        ],
        healthCheck: check,
      }),
    ]);
    const c1 = addressOf(0);
    const all = clusters.map((_, i) => addressOf(i)).sort();
    /** Milliseconds until every dns-server's answer for `qname` satisfies `ok`: the slowest, and each. */
    const untilEvery = async (qname: string, ok: (got: string[]) => boolean, t0: number) => {
      const each = await Promise.all(
        dns.map((d, i) =>
          eventually(
            async () => {
              const got = await addressesAt(d.port, qname);
              if (!ok(got))
                throw new Error(
                  `${qname} at ${d.port}: ${got.length} addresses: ${got.slice(0, 5).join(' ')}`,
                );
              return Date.now() - t0;
            },
            // At 50 clusters on two cores the probes alone keep the load average near 10.
            180_000,
            25,
          ).catch((err: unknown) => {
            // What the one that did not converge, and the operator, said about its cluster.
            const cluster = clusters[i]!;
            const tail = (lines: string[]) => lines.slice(-20).join('\n');
            process.stderr.write(
              `--- dns-server of ${cluster}, last lines ---\n${tail(d.logs().split('\n'))}\n--- operator on ${cluster} ---\n${tail((op?.logs ?? []).filter((l) => l.includes(`/${cluster}"`) || l.includes(` ${cluster}`)))}\n`,
            );
            throw err;
          }),
        ),
      );
      return { slowest: Math.max(...each), each };
    };
    await untilEvery(name('hc'), (got) => got.join() === c1, Date.now());
    await untilEvery(name('plain'), (got) => got.sort().join() === all.join(), Date.now());
    process.stderr.write(
      `${n} workload clusters, dns-servers and gateways ready in ${Date.now() - began} ms\n`,
    );

    const rows = {
      failover: [] as number[],
      recovery: [] as number[],
      unready: [] as number[],
      ready: [] as number[],
    };
    const perServer = { failover: [] as number[], unready: [] as number[] };
    for (let k = 0; k < opts.changes; k++) {
      let t0 = Date.now();
      await gateways[0]!.stop();
      const down = await untilEvery(name('hc'), (got) => got.length > 0 && !got.includes(c1), t0);
      rows.failover.push(down.slowest);
      perServer.failover.push(...down.each);
      t0 = Date.now();
      gateways[0] = await startGateway(c1, port, { name: 'c1' });
      rows.recovery.push((await untilEvery(name('hc'), (got) => got.join() === c1, t0)).slowest);
      t0 = Date.now();
      await setLoadBalancer(env.kubeConfig('c1'), 'projectcontour', 'envoy', []);
      const unready = await untilEvery(name('plain'), (got) => got.length > 0 && !got.includes(c1), t0);
      rows.unready.push(unready.slowest);
      perServer.unready.push(...unready.each);
      t0 = Date.now();
      await setLoadBalancer(env.kubeConfig('c1'), 'projectcontour', 'envoy', [{ ip: c1 }]);
      rows.ready.push((await untilEvery(name('plain'), (got) => got.includes(c1), t0)).slowest);
    }
    const f = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      return `p50 ${percentile(s, 50)} ms  p99 ${percentile(s, 99)} ms  (min ${s[0]}, max ${s[s.length - 1]})`;
    };
    const out = (line: string) => process.stdout.write(`${line}\n`);
    out(`\n== ${n} workload clusters, ${opts.changes} changes each; ${loadAverage()}`);
    out(
      `data path, gateway stopped → every dns-server without it:   ${f(rows.failover)}   (bound ${BOUND_MS} ms)`,
    );
    out(`   each dns-server:                                        ${f(perServer.failover)}`);
    out(`data path, gateway back → every dns-server answers it:      ${f(rows.recovery)}`);
    out(`reference, readiness: ingress removed → every dns-server:   ${f(rows.unready)}`);
    out(`   each dns-server:                                        ${f(perServer.unready)}`);
    out(`reference, readiness: ingress back → every dns-server:      ${f(rows.ready)}`);

    // Weights: one dns-server asked --queries times.
    await untilEvery(name('weighted'), (got) => got.length === 1, Date.now());
    const counts = new Map<string, number>();
    const query = encode({
      type: 'query',
      id: 7,
      questions: [{ type: 'A', name: name('weighted'), class: 'IN' }],
    });
    for (let i = 0; i < opts.queries; i++) {
      const got = (decode(await exchange(dns[n - 1]!.port, query, 'udp')).answers ?? [])
        .map((a) => String((a as { data?: unknown }).data))
        .join(',');
      counts.set(got, (counts.get(got) ?? 0) + 1);
    }
    const share = (a: string) => (((counts.get(a) ?? 0) / opts.queries) * 100).toFixed(2);
    out(
      `weights 3:1:0 over ${opts.queries} answers: c1 ${share(c1)} % (want 75), c2 ${share(addressOf(1))} % (want 25), others ${Math.max(0, 100 - Number(share(c1)) - Number(share(addressOf(1)))).toFixed(2)} % (want 0)`,
    );

    // qps: the weighted, health-checked name against a plain per-cluster name, interleaved.
    const files = { weighted: path.join(tmp, 'weighted.txt'), plain: path.join(tmp, 'plain.txt') };
    writeFileSync(files.weighted, `${name('weighted')} A\n`);
    writeFileSync(files.plain, `x.plain.c1.${NS}.clusters.xcc.test A\n`);
    const target = dns[n - 1]!.port;
    await dnsperf(target, files.plain, 1);
    const qps = { weighted: [] as number[], plain: [] as number[] };
    for (let r = 0; r < 2; r++)
      for (const kind of ['plain', 'weighted'] as const)
        qps[kind].push((await dnsperf(target, files[kind], opts.qpsSeconds)).qps);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    out(
      `qps, one dns-server: weighted + checked ${qps.weighted.map((q) => q.toFixed(0)).join(', ')}; plain ${qps.plain.map((q) => q.toFixed(0)).join(', ')}; ratio ${(mean(qps.weighted) / mean(qps.plain)).toFixed(3)} (want ≥ 0.9)`,
    );

    // Cost at rest, on one dns-server (the others stopped: on this machine N of them share two cores,
    // and each probes every cluster's gateways): --gatewaydns GatewayDNS without checks, then the
    // same with checks.
    if (n > 10) {
      // 100 GatewayDNS over N clusters are 100 × N × N record sets to write (62,500 at 25): the
      // operator's scale is bench/scale.ts's; the cost of probing is the dns-server's, at 10.
      out(`at rest: measured at 10 clusters only (${opts.gatewayDnsCount} × ${n} × ${n} record sets here)`);
      return;
    }
    const probing = dns[n - 1]!;
    await Promise.all(dns.slice(0, n - 1).map((d) => d.stop()));
    const many = (withChecks: boolean) =>
      Array.from({ length: opts.gatewayDnsCount }, (_, i) =>
        gatewayDns(`rest-${i}`, {
          gatewayLabel: `rest-${i}`,
          ...(withChecks ? { healthCheck: { ...check, path: `/healthz?gatewaydns=${i}` } } : {}),
        }),
      );
    const rest = async (label: string) => {
      await new Promise((r) => setTimeout(r, 5000));
      const probes = async () => {
        const m = await metricsAt(`127.0.0.1:${probing.healthPort}`);
        return (
          (m['capi_dns_server_probes_total{result="success"}'] ?? 0) +
          (m['capi_dns_server_probes_total{result="failure"}'] ?? 0)
        );
      };
      const pids = [probing.child.pid!];
      const cpu0 = pids.map(cpuSeconds);
      const p0 = await probes();
      const t0 = Date.now();
      await new Promise((r) => setTimeout(r, opts.restSeconds * 1000));
      const seconds = (Date.now() - t0) / 1000;
      const cpu = pids.map((p, i) => cpuSeconds(p) - cpu0[i]!);
      const rss = pids.map((p) => memoryMb(p));
      out(
        `at rest, ${label}: ${(((await probes()) - p0) / seconds).toFixed(1)} probes/s; CPU ${((mean(cpu) / seconds) * 100).toFixed(2)} % of a core; RSS ${mean(rss).toFixed(1)} MB`,
      );
    };
    const settled = async (check: () => Promise<void>) => {
      await eventually(check, 300_000, 500);
      // The operator's writes of the last ones, and the rebuilds they cause, are done by now.
      await new Promise((r) => setTimeout(r, 10_000));
    };
    await apply(management, many(false));
    await settled(async () => {
      const got = await addressesAt(probing.port, name(`rest-${opts.gatewayDnsCount - 1}`));
      if (got.length !== n) throw new Error(`${got.length} addresses`);
    });
    await rest(`${opts.gatewayDnsCount} GatewayDNS without checks (reference)`);
    await apply(management, many(true));
    await settled(async () => {
      const m = await metricsAt(`127.0.0.1:${probing.healthPort}`);
      const targets =
        (m['capi_dns_server_probe_targets{state="healthy"}'] ?? 0) +
        (m['capi_dns_server_probe_targets{state="unhealthy"}'] ?? 0);
      if (targets < opts.gatewayDnsCount * n) throw new Error(`${targets} probe targets`);
    });
    await rest(
      `${opts.gatewayDnsCount} GatewayDNS with checks (${opts.gatewayDnsCount * n + n} targets, every ${CHECK.periodSeconds} s)`,
    );
  } finally {
    await op?.stop();
    await Promise.all(dns.map((d) => d.stop()));
    await Promise.all(gateways.map((g) => g?.stop()));
    await env.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

const { values } = parseArgs({
  options: {
    clusters: { type: 'string', default: '10' },
    changes: { type: 'string', default: '10' },
    queries: { type: 'string', default: '10000' },
    'qps-seconds': { type: 'string', default: '5' },
    gatewaydns: { type: 'string', default: '100' },
    rest: { type: 'string', default: '20' },
  },
});
process.stdout.write(`${machine()}\n`);
for (const n of values.clusters.split(',').map(Number))
  await run(n, {
    changes: Number(values.changes),
    queries: Number(values.queries),
    qpsSeconds: Number(values['qps-seconds']),
    gatewayDnsCount: Number(values.gatewaydns),
    restSeconds: Number(values.rest),
  });
