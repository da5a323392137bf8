// A DNSZone delegation change taking effect (issue 42, item 3: < 1 s) on real
// API servers (test/testenv) with the operator and one dns-server per
// workload cluster as child processes. Two team namespaces, a and b, each
// with a GatewayDNS in every workload cluster and a different address; both
// ask for the same two names. Timed, interleaved change by change, from the
// write on the management cluster until EVERY cluster's dns-server answers
// the name with the new holder's address:
// - delegation: the DNSZone's delegation of x.apps.corp.internal flipped
//   between namespace a and namespace b (DNSZone reconcile → status.enforced
//   → every GatewayDNS reconciled → record sets);
// - reference: the first-claim path of a zone declared by flags only, where
//   a name already moves between namespaces today: y.xcc.test taken out of
//   the older GatewayDNS's spec.hostnames (the newer one takes it over), or
//   put back (the older one takes it back).
// The dns-servers are asked every 20 ms over TCP.
//
//   npm run build && node dist/bench/zone-delegation.js [--clusters 2] [--changes 10]
import os from 'node:os';
import { parseArgs } from 'node:util';
import type { KubernetesObject } from '@kubernetes/client-node';
import { registerWorkloadCluster, ensureNamespace, waitForClusterProvisioned } from '../test/support/capi.js';
import { addressesAt, startDnsServer, type DnsProcess } from '../test/support/dns.js';
import { apply } from '../test/support/kube.js';
import { setLoadBalancer, startOperator } from '../test/support/operator.js';
import { prepareClusters } from '../test/support/prepare.js';
import { TestEnv } from '../test/support/testenv.js';
import { percentile } from './rank.js';

const ZONE = 'apps.corp.internal';
const X = `x.${ZONE}`;
const Y = 'y.xcc.test';
const TEAMS = ['a', 'b'] as const;
const ADDRESS = { a: '127.0.70.1', b: '127.0.70.2' } as const;

function summary(label: string, ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  return `${label.padEnd(52)} min ${s[0]!.toFixed(0).padStart(5)}  p50 ${percentile(s, 50).toFixed(0).padStart(5)}  max ${s[s.length - 1]!.toFixed(0).padStart(5)} ms  (n=${s.length})`;
}

/** The time when every dns-server answers `name` with exactly `want`, polling each every 20 ms. */
async function answeredEverywhere(
  servers: DnsProcess[],
  name: string,
  want: string,
  timeoutMs = 30_000,
): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  const pending = new Set(servers);
  for (;;) {
    for (const s of [...pending]) {
      const got = await addressesAt(s.port, name).catch(() => []);
      if (got.join() === want) pending.delete(s);
    }
    if (!pending.size) return performance.now();
    if (performance.now() > deadline)
      throw new Error(`${name}: not ${want} everywhere within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function gatewayDns(team: string, hostnames: string[]): KubernetesObject {
  return {
    apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
    kind: 'GatewayDNS',
    metadata: { name: 'web', namespace: team },
    spec: { clusterSelector: {}, service: `${team}/web`, hostnames },
  } as KubernetesObject;
}

function dnsZone(team: string): KubernetesObject {
  return {
    apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
    kind: 'DNSZone',
    metadata: { name: 'apps' },
    spec: { zone: ZONE, delegations: [{ namespaces: [team], hostnames: [X] }] },
  } as KubernetesObject;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { clusters: { type: 'string', default: '2' }, changes: { type: 'string', default: '10' } },
  });
  const clusterCount = Number(values.clusters);
  const changes = Number(values.changes);
  const names = Array.from({ length: clusterCount }, (_, i) => `cluster-${i + 1}`);
  const began = Date.now();
  const env = await TestEnv.start({ workloadClusters: names });
  const servers: DnsProcess[] = [];
  let op: Awaited<ReturnType<typeof startOperator>> | undefined;
  try {
    const management = env.kubeConfig('management');
    await prepareClusters(env, { namespace: 'a', workloads: names, recordsNamespace: 'capi-dns' });
    await ensureNamespace(management, 'b');
    for (const name of names) {
      await registerWorkloadCluster(management, {
        namespace: 'b',
        cluster: name,
        kubeconfigPath: env.cluster(name).kubeconfig,
      });
      await waitForClusterProvisioned(management, 'b', name);
      for (const team of TEAMS)
        await setLoadBalancer(env.kubeConfig(name), team, 'web', [{ ip: ADDRESS[team] }]);
      servers.push(
        await startDnsServer(['--zone', 'xcc.test', '--kubeconfig', env.cluster(name).kubeconfig]),
      );
    }
    op = await startOperator(env.cluster('management').kubeconfig, [
      '--no-leader-elect',
      '--no-manage-corefiles',
    ]);
    await apply(management, [dnsZone('a'), gatewayDns('a', [X, Y])]);
    // b is the newer claim of both names.
    await new Promise((r) => setTimeout(r, 1100));
    await apply(management, [gatewayDns('b', [X, Y])]);
    await answeredEverywhere(servers, X, ADDRESS.a, 120_000);
    await answeredEverywhere(servers, Y, ADDRESS.a, 60_000);
    process.stderr.write(`${clusterCount} workload clusters ready in ${Date.now() - began} ms\n`);

    const delegationMs: number[] = [];
    const referenceMs: number[] = [];
    for (let i = 0; i < changes; i++) {
      const to = i % 2 === 0 ? 'b' : 'a';
      let t0 = performance.now();
      await apply(management, [dnsZone(to)]);
      delegationMs.push((await answeredEverywhere(servers, X, ADDRESS[to])) - t0);
      // The reference: the older claim lets go of y (b takes it), or asks again (a takes it back).
      t0 = performance.now();
      await apply(management, [gatewayDns('a', to === 'b' ? [X] : [X, Y])]);
      referenceMs.push((await answeredEverywhere(servers, Y, ADDRESS[to])) - t0);
    }
    const out = process.stdout;
    out.write(
      `\nDNSZone delegation change: ${clusterCount} workload clusters, ${changes} changes each side, interleaved; ${os.cpus()[0]?.model}, ${os.cpus().length} cores, Linux ${os.release()}, Node ${process.version}, load ${os.loadavg()[0]!.toFixed(1)}\n`,
    );
    out.write(`${summary('delegation flipped → answered in every cluster', delegationMs)}\n`);
    out.write(`${summary('  reference: first claim let go → every cluster', referenceMs)}\n`);
    out.write(`delegation, each change (ms): ${delegationMs.map((m) => m.toFixed(0)).join(' ')}\n`);
    out.write(`reference, each change (ms):  ${referenceMs.map((m) => m.toFixed(0)).join(' ')}\n`);
  } finally {
    await op?.stop();
    await Promise.all(servers.map((s) => s.stop()));
    await env.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(
    `zone-delegation: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
