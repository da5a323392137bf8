// What one change to the dns-server buys: two builds (two dist directories,
// e.g. one copied before the change) answer the same zone side by side, and
// dnsperf saturates them in turn, A, B, A, B, ..., so that a neighbour's load
// on a shared machine hits both alike. Prints each run and the median ratio.
//
//   node dist/bench/dns-ab.js --a dist/ab/before --b dist [--records 20000] [--seconds 5] [--rounds 4] [--args="--workers 2"]
// (a copy of dist must stay inside the repository, so that it finds node_modules)
// One build with two settings: --a dist --b dist --b-args="--rrl-responses-per-second 1000000".
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { dnsperf, loadAverage, machine, startBuild, writeWorkload, type ServerProcess } from './dns-load.js';

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
    for (let round = 1; round <= Number(values.rounds); round++) {
      // Alternate which goes first, so neither always runs right after the other's load.
      const order = round % 2 ? [0, 1] : [1, 0];
      for (const i of order)
        qps[i as 0 | 1].push((await dnsperf(servers[i]!.port, load.queryFile, Number(values.seconds))).qps);
      process.stdout.write(
        `round ${round}: A ${qps[0].at(-1)!.toFixed(0)} qps, B ${qps[1].at(-1)!.toFixed(0)} qps (${loadAverage()})\n`,
      );
    }
    const median = (xs: number[]) => {
      const s = [...xs].sort((x, y) => x - y);
      return (s[Math.floor((s.length - 1) / 2)]! + s[Math.ceil((s.length - 1) / 2)]!) / 2;
    };
    const ratios = qps[1].map((b, i) => b / qps[0][i]!);
    process.stdout.write(
      `A ${Math.min(...qps[0]).toFixed(0)}–${Math.max(...qps[0]).toFixed(0)} qps, B ${Math.min(...qps[1]).toFixed(0)}–${Math.max(...qps[1]).toFixed(0)} qps; ` +
        `B/A per round ${ratios.map((r) => r.toFixed(2)).join(' ')}, median ${median(ratios).toFixed(2)}\n`,
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
