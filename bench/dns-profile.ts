// Where the dns-server's time goes under load: runs it with --cpu-prof, drives
// it with dnsperf at saturation for a while, stops it and prints the functions
// with the most self time (the .cpuprofile stays for Chrome DevTools).
//
//   npm run build && node dist/bench/dns-profile.js [--records 20000] [--seconds 10] [--target dns-server|echo] [--out DIR] [--dist DIR]
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { repoRoot } from '../test/support/paths.js';
import { stopChild } from '../test/support/stop-child.js';
import { dnsperf, machine, writeWorkload, ZONE } from './dns-load.js';

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
}

/** Self time by function (name, file, line), as shares of all samples, largest first. */
export function topFrames(profile: CpuProfile, count: number): [string, number][] {
  const frameOf = new Map<number, string>();
  for (const n of profile.nodes) {
    const { functionName, url, lineNumber } = n.callFrame;
    const file = url ? `${url.replace(/^.*\/(node:)?/, '$1')}:${lineNumber + 1}` : '';
    frameOf.set(n.id, `${functionName || '(anonymous)'} ${file}`.trim());
  }
  const self = new Map<string, number>();
  for (const id of profile.samples) {
    const f = frameOf.get(id)!;
    self.set(f, (self.get(f) ?? 0) + 1);
  }
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([f, n]) => [f, n / profile.samples.length]);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      records: { type: 'string', default: '20000' },
      seconds: { type: 'string', default: '10' },
      target: { type: 'string', default: 'dns-server' },
      out: { type: 'string' },
      // Another build to profile (e.g. one copied before a change).
      dist: { type: 'string', default: path.join(repoRoot(), 'dist') },
    },
  });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-profile-'));
  // Outside `dir`, which is removed at the end: the profile stays for DevTools.
  const profDir = values.out ?? mkdtempSync(path.join(os.tmpdir(), 'capi-dns-cpuprofile-'));
  mkdirSync(profDir, { recursive: true });
  try {
    const load = writeWorkload(dir, Number(values.records));
    const script =
      values.target === 'echo'
        ? [path.join(values.dist, 'bench', 'udp-echo.js')]
        : [
            path.join(values.dist, 'dns-server', 'main.js'),
            ...[
              '--listen',
              '127.0.0.1:0',
              '--zone',
              ZONE,
              '--records-file',
              load.recordsFile,
              '--lameduck',
              '0s',
            ],
          ];
    const child = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir', profDir, ...script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      // The echo server prints its port; the dns-server logs "serving" with it, then loads the records.
      const port = await new Promise<number>((resolve, reject) => {
        const lines = readline.createInterface({
          input: values.target === 'echo' ? child.stdout! : child.stderr!,
        });
        lines.on('line', (line) => {
          if (/^\d+$/.test(line)) resolve(Number(line));
          const listen = /"listen":"[^"]*:(\d+)"/.exec(line);
          if (listen) resolve(Number(listen[1]));
        });
        child.once('exit', (code) => reject(new Error(`${values.target} exited (${code})`)));
      });
      await new Promise((r) => setTimeout(r, 3000)); // records loaded (20,000 take about 1 s)
      await dnsperf(port, load.queryFile, 2);
      const run = await dnsperf(port, load.queryFile, Number(values.seconds));
      process.stdout.write(
        `${machine()}\n${values.target}: ${run.qps.toFixed(0)} qps saturating while profiled\n`,
      );
    } finally {
      await stopChild(child, 5000);
    }
    // One profile per thread: the answering (main) thread has by far the most samples.
    const profiles = readdirSync(profDir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => JSON.parse(readFileSync(path.join(profDir, f), 'utf8')) as CpuProfile);
    const main = profiles.sort((a, b) => b.samples.length - a.samples.length)[0];
    if (!main) throw new Error(`no profile written in ${profDir}`);
    process.stdout.write(`top frames by self time (${main.samples.length} samples, ${profDir}):\n`);
    for (const [frame, share] of topFrames(main, 20))
      process.stdout.write(`  ${(share * 100).toFixed(1).padStart(5)} %  ${frame}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
