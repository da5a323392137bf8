// The dns-server's memory against the size of its zone, as a pod runs it:
// Kubernetes mode, DNSRecordSets of 500 records each in a real API server
// (the test environment's), the shipped flags. For each size, each build
// given (this one and, with --reference, another, e.g. main's) is started
// in turn, interleaved run by run, and measured:
//
//   - load peak: the process's VmHWM once the first full build is served;
//   - settled: VmRSS once the build thread has ended (or after --settle);
//   - rebuild peak: VmHWM after one DNSRecordSet changes and is served;
//   - MB per 1,000 records: (rebuild peak − the empty server's) / records × 1,000.
//
//   node dist/bench/dns-memory.js [--reference ../ref/dist] [--sizes 20000,100000] [--runs 2]
//
// (the reference's dist must resolve node_modules: a worktree with node_modules linked in does)
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { DEFAULT_RECORDS_NAMESPACE } from '../api/index.js';
import { ensureNamespace } from '../test/support/capi.js';
import { installCrds, readManifests } from '../test/support/kube.js';
import { changeFirstRecord, generatedSets, putGeneratedSets } from '../test/support/recordsets.js';
import { repoRoot } from '../test/support/paths.js';
import { stopChild } from '../test/support/stop-child.js';
import { TestEnv } from '../test/support/testenv.js';
import { loadAverage, machine } from './dns-load.js';
import { memoryMb } from './proc.js';
import { DNS_SERVER_NODE_FLAGS } from '../scripts/images/dns-server-node-flags.js';

const CLUSTER = 'cluster-mem';

interface Figures {
  loadPeak: number;
  settled: number;
  rebuildPeak: number;
  settledAfterRebuild: number;
  failedBuilds: number;
}

const { values } = parseArgs({
  options: {
    reference: { type: 'string' },
    sizes: { type: 'string', default: '20000,100000' },
    runs: { type: 'string', default: '2' },
  },
});
const builds: [string, string][] = [['this', path.join(repoRoot(), 'dist')]];
if (values.reference) builds.push(['reference', path.resolve(values.reference)]);
const sizes = values.sizes!.split(',').map(Number);
const runs = Number(values.runs);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A dns-server of `dist` in Kubernetes mode with the flags config/ ships; its log lines parsed. */
function startServer(
  dist: string,
  kubeconfig: string,
): { child: ChildProcess; log: Record<string, unknown>[] } {
  const child = spawn(
    process.execPath,
    [
      ...DNS_SERVER_NODE_FLAGS,
      path.join(dist, 'dns-server', 'main.js'),
      '--listen=127.0.0.1:0',
      '--zone=xcc.test',
      `--namespace=${DEFAULT_RECORDS_NAMESPACE}`,
      '--lameduck=0s',
      '--log-level=debug',
      `--kubeconfig=${kubeconfig}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const log: Record<string, unknown>[] = [];
  let rest = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop()!;
    for (const line of lines)
      try {
        log.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        log.push({ msg: line });
      }
  });
  return { child, log };
}

async function until(what: string, check: () => boolean, ms = 120_000): Promise<void> {
  const began = Date.now();
  while (!check()) {
    if (Date.now() - began > ms) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

const rebuilt = (log: Record<string, unknown>[], records: number) =>
  log.filter((l) => l.msg === 'zones rebuilt' && Number(l.records) >= records).length;

async function measure(
  dist: string,
  kubeconfig: string,
  records: number,
  change: () => Promise<void>,
): Promise<Figures> {
  const { child, log } = startServer(dist, kubeconfig);
  try {
    const pid = child.pid!;
    await until('the first full build', () => rebuilt(log, records) > 0);
    const loadPeak = memoryMb(pid, 'VmHWM');
    // Settled: the build thread has ended (large zones: at once) and the kernel has the memory back.
    await until(
      'the build thread to end',
      () => log.some((l) => l.msg === 'build worker ended'),
      90_000,
    ).catch(() => undefined);
    await sleep(10_000);
    const settled = memoryMb(pid, 'VmRSS');
    const before = rebuilt(log, records);
    await change();
    await until('the rebuild', () => rebuilt(log, records) > before);
    const rebuildPeak = memoryMb(pid, 'VmHWM');
    await sleep(10_000);
    const settledAfterRebuild = memoryMb(pid, 'VmRSS');
    const failedBuilds = log.filter((l) => l.msg === 'zone build failed; serving the previous data').length;
    return { loadPeak, settled, rebuildPeak, settledAfterRebuild, failedBuilds };
  } finally {
    await stopChild(child, 5000);
  }
}

async function emptyPeak(dist: string, kubeconfig: string): Promise<number> {
  const { child, log } = startServer(dist, kubeconfig);
  try {
    await until('serving', () => rebuilt(log, 0) > 0);
    await sleep(2000);
    return memoryMb(child.pid!, 'VmHWM');
  } finally {
    await stopChild(child, 5000);
  }
}

const f = (n: number) => n.toFixed(0).padStart(6);

async function main(): Promise<void> {
  console.log(machine());
  const env = await TestEnv.start({ workloadClusters: [CLUSTER] });
  try {
    const kc: KubeConfig = env.kubeConfig(CLUSTER);
    await installCrds(kc, readManifests(path.join(repoRoot(), 'crds')));
    await ensureNamespace(kc, DEFAULT_RECORDS_NAMESPACE);
    const api = kc.makeApiClient(CustomObjectsApi);
    const kubeconfig = env.cluster(CLUSTER).kubeconfig;
    const empty = new Map<string, number>();
    for (const [name, dist] of builds) empty.set(name, await emptyPeak(dist, kubeconfig));
    console.log(`empty zone, peak MB: ${builds.map(([n]) => `${n} ${f(empty.get(n)!)}`).join(', ')}`);
    console.log(
      'records  build        run  load peak  settled  rebuild peak  settled  MB/1,000 records  failed builds',
    );
    for (const wanted of sizes) {
      const { sets, records } = generatedSets(wanted);
      await putGeneratedSets(api, sets);
      let flip = 0;
      const change = async () => {
        await changeFirstRecord(api, sets[0]!.metadata.name, `10.255.0.${++flip % 250}`);
      };
      for (let run = 1; run <= runs; run++)
        for (const [name, dist] of run % 2 === 1 ? builds : [...builds].reverse()) {
          const m = await measure(dist, kubeconfig, records, change);
          const perK = ((m.rebuildPeak - empty.get(name)!) / records) * 1000;
          console.log(
            `${String(records).padStart(7)}  ${name.padEnd(10)} ${String(run).padStart(4)}  ${f(m.loadPeak)}     ${f(m.settled)}   ${f(m.rebuildPeak)}        ${f(m.settledAfterRebuild)}   ${perK.toFixed(2).padStart(8)}          ${m.failedBuilds}   (${loadAverage()})`,
          );
        }
    }
  } finally {
    await env.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
