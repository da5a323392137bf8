// What one change to the dns-server buys: two builds (two dist directories,
// e.g. one copied before the change) answer the same zone side by side, and
// dnsperf saturates them in turn, A, B, A, B, ..., so that a neighbour's load
// on a shared machine hits both alike. Prints each run (queries a second, and
// the CPU the server used per 10,000 answers, which a neighbour's load moves
// less) and the median ratios.
//
//   node dist/bench/dns-ab.js --a dist/ab/before --b dist [--records 20000] [--seconds 5] [--rounds 4] [--args="--workers 2"]
// (a copy of dist must stay inside the repository, so that it finds node_modules)
// One build with two settings: --a dist --b dist --b-args="--rrl-responses-per-second 1000000".
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { dnsperf, loadAverage, machine, startBuild, writeWorkload, type ServerProcess } from './dns-load.js';
import { cpuSeconds } from './proc.js';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      a: { type: 'string' },
      b: { type: 'string', default: 'dist' },
      records: { type: 'string', default: '20000' },
      seconds: { type: 'string', default: '5' },
      rounds: { type: 'string', default: '4' },
      // Extra dns-server flags for both, e.g. "--workers 2".
      args: { type: 'string', default: '' },
      // Extra flags for one side only (a setting compared with itself off).
      'a-args': { type: 'string', default: '' },
      'b-args': { type: 'string', default: '' },
    },
  });
  if (!values.a) throw new Error('--a DIST is required (the build to compare with)');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-ab-'));
  const servers: ServerProcess[] = [];
  try {
    const load = writeWorkload(dir, Number(values.records));
    const words = (s: string) => s.split(' ').filter(Boolean);
    const args = words(values.args);
    for (const [dist, own] of [
      [values.a, values['a-args']],
      [values.b, values['b-args']],
    ] as const)
      servers.push(
        await startBuild(path.resolve(dist), load.recordsFile, { args: [...args, ...words(own)] }),
      );
    process.stdout.write(
      `${machine()}\nA = ${values.a} ${values['a-args']}, B = ${values.b} ${values['b-args']}\n`,
    );
    for (const s of servers) await dnsperf(s.port, load.queryFile, 2); // warm-up
    const qps: [number[], number[]] = [[], []];
    const cpu: [number[], number[]] = [[], []];
    for (let round = 1; round <= Number(values.rounds); round++) {
      // Alternate which goes first, so neither always runs right after the other's load.
      const order = round % 2 ? [0, 1] : [1, 0];
      for (const i of order) {
        const pid = servers[i]!.child.pid!;
        const before = cpuSeconds(pid);
        const run = await dnsperf(servers[i]!.port, load.queryFile, Number(values.seconds));
        qps[i as 0 | 1].push(run.qps);
        cpu[i as 0 | 1].push(((cpuSeconds(pid) - before) * 1000 * 10_000) / run.completed);
      }
      process.stdout.write(
        `round ${round}: A ${qps[0].at(-1)!.toFixed(0)} qps ${cpu[0].at(-1)!.toFixed(1)} ms/10k, ` +
          `B ${qps[1].at(-1)!.toFixed(0)} qps ${cpu[1].at(-1)!.toFixed(1)} ms/10k (${loadAverage()})\n`,
      );
    }
    const median = (xs: number[]) => {
      const s = [...xs].sort((x, y) => x - y);
      return (s[Math.floor((s.length - 1) / 2)]! + s[Math.ceil((s.length - 1) / 2)]!) / 2;
    };
    const range = (xs: number[], digits: number) =>
      `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;
    const ratios = qps[1].map((b, i) => b / qps[0][i]!);
    const cpuRatios = cpu[1].map((b, i) => b / cpu[0][i]!);
    process.stdout.write(
      `A ${range(qps[0], 0)} qps, B ${range(qps[1], 0)} qps; ` +
        `B/A per round ${ratios.map((r) => r.toFixed(2)).join(' ')}, median ${median(ratios).toFixed(2)}\n` +
        `CPU per 10k answers: A ${range(cpu[0], 1)} ms, B ${range(cpu[1], 1)} ms; ` +
        `B/A per round ${cpuRatios.map((r) => r.toFixed(2)).join(' ')}, median ${median(cpuRatios).toFixed(2)}\n`,
    );
  } finally {
    for (const s of servers) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
