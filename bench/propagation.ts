// Propagation benchmark of capi-dns-controller: the time from a LoadBalancer
// status change in one workload cluster to the new record set in EVERY
// workload cluster, measured by watches in each of them. Real API servers
// (test/testenv), the operator as a child process.
//
//   npm run build && node dist/bench/propagation.js [--clusters 2,10] [--changes 60]
import { parseArgs } from 'node:util';
import type { KubernetesObject } from '@kubernetes/client-node';
import { TestEnv } from '../test/support/testenv.js';
import { apply, startRestarting } from '../test/support/kube.js';
import {
  recordSetInformer,
  setLoadBalancer,
  startOperator,
  type RecordSetObject,
} from '../test/support/operator.js';
import { prepareClusters } from '../test/support/prepare.js';
import { percentile } from './rank.js';

const NS = 'bench';
const SET = `${NS}.gw`;

async function run(clusterCount: number, changes: number): Promise<void> {
  const names = Array.from({ length: clusterCount }, (_, i) => `cluster-${i + 1}`);
  const began = Date.now();
  const env = await TestEnv.start({ workloadClusters: names });
  const watches: { stop(): Promise<void> }[] = [];
  let op: Awaited<ReturnType<typeof startOperator>> | undefined;
  try {
    await prepareClusters(env, { namespace: NS, workloads: names, recordsNamespace: 'capi-dns' });
    const management = env.kubeConfig('management');
    const source = env.kubeConfig(names[0]!);
    await setLoadBalancer(source, 'gw', 'envoy', [{ ip: '127.0.40.0' }]);
    process.stderr.write(`${clusterCount} workload clusters ready in ${Date.now() - began} ms\n`);

    // What each cluster currently publishes for the source cluster, and waiters for a value.
    const current = new Map<string, string>();
    let waiters: (() => void)[] = [];
    const arrivals = new Map<string, number>();
    const wanted = `*.gateway.${names[0]}.${NS}.clusters.xcc.test`;
    for (const name of names) {
      const kc = env.kubeConfig(name);
      const seen = (obj: RecordSetObject) => {
        const value = obj.spec?.records?.find((r) => r.name === wanted)?.values.join(',') ?? '';
        if (current.get(name) === value) return;
        current.set(name, value);
        arrivals.set(`${name}|${value}`, performance.now());
        waiters.splice(0).forEach((w) => w());
      };
      const informer = recordSetInformer(kc);
      const onObject = (obj: RecordSetObject) => {
        // The source cluster's own record set (one per source cluster) holds the name watched.
        if (obj.metadata?.name === `${SET}.${names[0]}`) seen(obj);
      };
      informer.on('add', onObject);
      informer.on('update', onObject);
      watches.push({ stop: await startRestarting(informer) });
    }

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
        metadata: { name: 'gw', namespace: NS },
        spec: { clusterSelector: {}, service: 'gw/envoy' },
      } as KubernetesObject,
    ]);
    const everywhere = (value: string, timeoutMs: number) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${value} not everywhere after ${timeoutMs} ms`)),
          timeoutMs,
        );
        const check = () => {
          if (names.every((n) => current.get(n) === value)) {
            clearTimeout(timer);
            resolve();
          } else waiters.push(check);
        };
        check();
      });
    await everywhere('127.0.40.0', 30_000).catch(async (err: unknown) => {
      process.stderr.write(
        `seen: ${JSON.stringify([...current])}\nexit ${op?.child.exitCode}/${op?.child.signalCode} health ${op?.health}\n${op ? await (await fetch(`http://${op.health}/metrics`)).text().catch(String) : ''}\noperator log:\n${op?.logs.slice(-30).join('\n')}\n`,
      );
      throw err;
    });

    const latencies: number[] = [];
    for (let i = 1; i <= changes; i++) {
      const ip = `127.0.${41 + Math.floor(i / 250)}.${i % 250}`;
      const t0 = performance.now();
      await setLoadBalancer(source, 'gw', 'envoy', [{ ip }]);
      await everywhere(ip, 10_000);
      latencies.push(Math.max(...names.map((n) => arrivals.get(`${n}|${ip}`) ?? NaN)) - t0);
      await new Promise((r) => setTimeout(r, 20));
    }
    latencies.sort((a, b) => a - b);
    const f = (ms: number) => `${ms.toFixed(1)} ms`;
    process.stdout.write(
      `propagation, ${clusterCount} workload clusters, ${changes} changes: p50 ${f(percentile(latencies, 50))}  p99 ${f(percentile(latencies, 99))}  max ${f(latencies[latencies.length - 1]!)}  min ${f(latencies[0]!)}\n`,
    );
    waiters = [];
  } finally {
    await op?.stop();
    await Promise.all(watches.map((w) => w.stop()));
    await env.stop();
  }
}

const { values } = parseArgs({
  options: { clusters: { type: 'string', default: '2,10' }, changes: { type: 'string', default: '60' } },
});
for (const n of values.clusters.split(',').map(Number)) await run(n, Number(values.changes));
