// Benchmark: dnsperf against NSD (one server process) and the dns-server
// serving the same generated zone, on this machine, in one run. Prints the
// machine, then for each server, in interleaved runs (NSD, dns-server, echo,
// NSD, dns-server, echo, ...): queries per second at saturation, the CPU the
// server's processes used per 10,000 answers meanwhile, and latency
// percentiles at half of that server's own saturation rate (and at a fixed
// rate), then the spread (min–max) of each and the ratio to NSD's run.
//
// The dns-server runs twice side by side: with UDP through the batched native
// module (--udp-io native, the default; docs/adr/0105) and through dgram.
//
// "udp echo" (bench/udp-echo.ts) answers each query with itself: the floor of
// one Node process's UDP path, whatever a DNS server does per datagram.
// With --workers N (default 2; 1 to skip) both also run with N answering
// processes, against NSD with N server processes (server-count).
//
//   npm run bench:dns -- [--records 100000] [--seconds 10] [--runs 2] [--latency-qps 20000]
//                        [--latency-seconds 5] [--workers 2] [--no-echo]
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { startDnsServer, startNsd, type DnsProcess } from '../test/support/dns.js';
import { asRecordSets, zoneFile } from '../test/support/dnszone.js';
import { stopChild } from '../test/support/stop-child.js';
import {
  dnsperf,
  loadAverage,
  machine,
  percentile,
  writeWorkload,
  ZONE,
  type PerfResult,
} from './dns-load.js';
import { memoryMb, treeCpu } from './proc.js';

/** VmRSS of a process and of its children (the --workers processes). */
function treeRssMb(pid: number): number {
  let total = memoryMb(pid);
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
    for (const child of children ? children.split(' ') : []) total += treeRssMb(Number(child));
  }
  return total;
}

/** Starts the dns-server on the records file and waits until /readyz says the records are in. */
async function startOurs(
  file: string,
  workers: number,
  udpIo: 'native' | 'dgram' = 'native',
): Promise<{ server: DnsProcess; loadMs: number }> {
  const began = Date.now();
  const server = await startDnsServer(
    ['--zone', ZONE, '--records-file', file, '--workers', String(workers), '--udp-io', udpIo],
    {
      health: true,
    },
  );
  for (;;) {
    const res = await fetch(`http://127.0.0.1:${server.healthPort}/readyz`);
    if (res.status === 200) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  if (udpIo === 'native' && /batched native module is not usable/.test(server.logs()))
    throw new Error(`the native UDP path did not load:\n${server.logs()}`);
  return { server, loadMs: Date.now() - began };
}

/** bench/udp-echo.ts as a child process (it prints its port). */
async function startEcho(): Promise<DnsProcess> {
  const child = spawn(process.execPath, [path.join(import.meta.dirname, 'udp-echo.js')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).once('line', (l) => resolve(Number(l)));
    child.once('exit', (code) => reject(new Error(`udp-echo exited (${code})`)));
  });
  return { port, dir: '', child, logs: () => '', stop: () => stopChild(child, 3000) };
}

interface Run {
  max: PerfResult;
  /** CPU milliseconds the server's processes used per 10,000 answers while saturated. */
  cpuPer10k: number;
  /** At half of this run's saturation rate. */
  half: PerfResult;
  halfQps: number;
  fixed: PerfResult | undefined;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    allowNegative: true,
    options: {
      records: { type: 'string', default: '100000' },
      seconds: { type: 'string', default: '10' },
      runs: { type: 'string', default: '2' },
      'latency-qps': { type: 'string', default: '20000' },
      'latency-seconds': { type: 'string', default: '5' },
      workers: { type: 'string', default: '2' },
      echo: { type: 'boolean', default: true },
    },
  });
  const seconds = Number(values.seconds);
  const runs = Number(values.runs);
  const latencyQps = Number(values['latency-qps']);
  const latencySeconds = Number(values['latency-seconds']);
  const workers = Number(values.workers);
  for (const [flag, n] of Object.entries({ seconds, runs, latencySeconds, workers }))
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${flag} must be a positive integer, got ${n}`);

  process.stdout.write(`${machine()}\n`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-bench-'));
  const processes: DnsProcess[] = [];
  try {
    const load = writeWorkload(dir, Number(values.records));
    process.stdout.write(
      `zone: ${load.records} records (${load.hosts} hosts, ${load.gateways} wildcard gateways)\n`,
    );
    const { server: ours, loadMs } = await startOurs(load.recordsFile, 1);
    processes.push(ours);
    const metrics = await (await fetch(`http://127.0.0.1:${ours.healthPort}/metrics`)).text();
    const served = Number(/capi_dns_server_records (\d+)/.exec(metrics)?.[1]);
    const rssLoaded = memoryMb(ours.child.pid!);
    const nsd = await startNsd(
      ZONE,
      zoneFile(load.zone, {
        mname: `ns1.${ZONE}`,
        rname: `hostmaster.${ZONE}`,
        serial: 1,
        refresh: 3600,
        retry: 600,
        expire: 86400,
        minimum: 30,
        ttl: 30,
      }),
    );
    processes.push(nsd);
    const dgramOne = await startOurs(load.recordsFile, 1, 'dgram');
    processes.push(dgramOne.server);
    // [name, server, the NSD run its throughput is compared with]
    const servers: [string, DnsProcess, string][] = [
      ['nsd', nsd, 'nsd'],
      ['dns-server', ours, 'nsd'],
      ['dns-server dgram', dgramOne.server, 'nsd'],
    ];
    let multi: { name: string; server: DnsProcess; loadMs: number; rssLoaded: number } | undefined;
    if (workers > 1) {
      const nsdMulti = await startNsd(ZONE, readFileSync(path.join(nsd.dir, 'zone'), 'utf8'), {
        serverCount: workers,
      });
      processes.push(nsdMulti);
      const nsdName = `nsd ×${workers}`;
      servers.push([nsdName, nsdMulti, nsdName]);
      const started = await startOurs(load.recordsFile, workers);
      processes.push(started.server);
      const name = `dns-server ×${workers}`;
      multi = { name, ...started, rssLoaded: treeRssMb(started.server.child.pid!) };
      servers.push([name, started.server, nsdName]);
      const dgramMulti = await startOurs(load.recordsFile, workers, 'dgram');
      processes.push(dgramMulti.server);
      servers.push([`${name} dgram`, dgramMulti.server, nsdName]);
    }
    if (values.echo) {
      const echo = await startEcho();
      processes.push(echo);
      servers.push(['udp echo', echo, 'nsd']);
    }
    process.stdout.write(
      `records served: ${served} (dns-server loaded and ready in ${loadMs} ms)\n` +
        `dns-server RSS: ${rssLoaded.toFixed(1)} MB loaded\n` +
        (multi
          ? `${multi.name} RSS (all processes): ${multi.rssLoaded.toFixed(1)} MB loaded (ready in ${multi.loadMs} ms)\n`
          : ''),
    );

    const ms = (s: number) => `${(s * 1000).toFixed(3)} ms`;
    const latencyLine = (r: PerfResult) => {
      const l = r.latencies;
      return `p50 ${ms(percentile(l, 50))}  p90 ${ms(percentile(l, 90))}  p99 ${ms(percentile(l, 99))}  max ${ms(l[l.length - 1] ?? NaN)}  (${l.length} answers, lost ${r.lost})`;
    };
    // Interleaved, so that a neighbour's burst on this shared machine does not hit one server only.
    const results = new Map<string, Run[]>(servers.map(([name]) => [name, []]));
    for (let run = 1; run <= runs; run++) {
      process.stdout.write(`\nrun ${run} (${loadAverage()}):\n`);
      for (const [name, server] of servers) {
        if (run === 1) await dnsperf(server.port, load.queryFile, 2); // warm-up
        const cpuBefore = treeCpu(server.child.pid!).total;
        const max = await dnsperf(server.port, load.queryFile, seconds);
        const cpuPer10k = ((treeCpu(server.child.pid!).total - cpuBefore) * 1000 * 10_000) / max.completed;
        const halfQps = Math.round(max.qps / 2);
        const half = await dnsperf(server.port, load.queryFile, latencySeconds, {
          qps: halfQps,
          verbose: true,
        });
        const fixed = latencyQps
          ? await dnsperf(server.port, load.queryFile, latencySeconds, { qps: latencyQps, verbose: true })
          : undefined;
        results.get(name)!.push({ max, cpuPer10k, half, halfQps, fixed });
        process.stdout.write(
          `  ${name.padEnd(19)} ${max.qps.toFixed(0).padStart(7)} qps saturating (lost ${max.lost}), ${cpuPer10k.toFixed(0)} ms CPU per 10k answers\n` +
            `  ${''.padEnd(19)} at ${halfQps} qps (half): ${latencyLine(half)}\n` +
            (fixed ? `  ${''.padEnd(19)} at ${latencyQps} qps: ${latencyLine(fixed)}\n` : ''),
        );
      }
    }

    const rssAfter = memoryMb(ours.child.pid!);
    // Latency while the records file changes and everything is rebuilt (in a worker thread):
    // queries go on being answered from the previous data.
    const rebuildQps = Math.round(Math.min(...results.get('dns-server')!.map((r) => r.halfQps)));
    const duringRebuild = dnsperf(ours.port, load.queryFile, 10, { qps: rebuildQps, verbose: true });
    await new Promise((r) => setTimeout(r, 1000));
    writeFileSync(
      load.recordsFile,
      `${readFileSync(load.recordsFile, 'utf8')}---\n${stringify(asRecordSets([{ name: `extra.${ZONE}`, type: 'A', ttl: 30, values: ['10.9.9.9'] }], 1)[0])}`,
    );
    const rebuild = await duringRebuild;
    const rssRebuilt = memoryMb(ours.child.pid!);

    const out: string[] = ['', `summary of ${runs} interleaved runs (${loadAverage()}):`];
    const referenceOf = new Map(servers.map(([name, , reference]) => [name, reference]));
    const range = (xs: number[], f: (x: number) => string) => `${f(Math.min(...xs))}–${f(Math.max(...xs))}`;
    out.push(`  throughput (dnsperf ${seconds} s, 200 outstanding, saturating), min–max:`);
    for (const [name, rs] of results) {
      const qps = rs.map((r) => r.max.qps);
      const reference = referenceOf.get(name)!;
      const referenceRuns = results.get(reference)!;
      const ratio =
        name === reference
          ? ''
          : `   ${range(
              rs.map((r, i) => r.max.qps / referenceRuns[i]!.max.qps),
              (x) => x.toFixed(2),
            )} × ${reference}`;
      out.push(
        `    ${name.padEnd(19)} ${range(qps, (x) => x.toFixed(0)).padStart(15)} qps  [${qps.map((x) => x.toFixed(0)).join(', ')}]${ratio}`,
      );
    }
    out.push("  CPU per 10,000 answers while saturated (all of the server's processes), per run:");
    for (const [name, rs] of results)
      out.push(`    ${name.padEnd(19)} ${rs.map((r) => `${r.cpuPer10k.toFixed(0)} ms`).join(', ')}`);
    out.push('  latency at half of its own saturation rate, p50 / p99 per run:');
    for (const [name, rs] of results)
      out.push(
        `    ${name.padEnd(19)} ${rs.map((r) => `${ms(percentile(r.half.latencies, 50))} / ${ms(percentile(r.half.latencies, 99))} at ${r.halfQps} qps`).join(';  ')}`,
      );
    if (latencyQps) {
      out.push(`  latency at ${latencyQps} qps, p50 / p99 per run:`);
      for (const [name, rs] of results)
        out.push(
          `    ${name.padEnd(19)} ${rs.map((r) => `${ms(percentile(r.fixed!.latencies, 50))} / ${ms(percentile(r.fixed!.latencies, 99))}`).join(';  ')}`,
        );
    }
    const lr = rebuild.latencies;
    out.push(
      `  dns-server during a full rebuild (records file changed 1 s into 10 s at ${rebuildQps} qps):`,
      `    p50 ${ms(percentile(lr, 50))}  p99 ${ms(percentile(lr, 99))}  max ${ms(lr[lr.length - 1] ?? NaN)}  (${lr.length} answers, lost ${rebuild.lost})`,
      `  dns-server RSS: ${rssLoaded.toFixed(1)} MB loaded, ${rssAfter.toFixed(1)} MB after the runs, ${rssRebuilt.toFixed(1)} MB after the rebuild`,
    );
    if (multi)
      out.push(
        `  ${multi.name} RSS (all processes) after the runs: ${treeRssMb(multi.server.child.pid!).toFixed(1)} MB`,
      );
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    for (const p of processes) await p.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
