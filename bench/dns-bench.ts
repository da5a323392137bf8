// Benchmark: dnsperf against the dns-server and against NSD (one server
// process) serving the same generated zone, in one run. Prints queries per
// second of both and their ratio (at saturation), latency percentiles at a
// fixed load, and the dns-server's resident memory with the records loaded.
//
// With --workers N (default 2; 1 to skip) the dns-server runs a second time
// with N answering processes (cluster module) on the same sockets.
//
//   npm run bench:dns -- [--records 100000] [--seconds 10] [--latency-qps 20000] [--workers 2]
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { startDnsServer, startNsd, type DnsProcess } from '../test/support/dns.js';
import { asRecordSets, generateZone, prng, zoneFile } from '../test/support/dnszone.js';

const ZONE = 'xcc.test';

interface PerfResult {
  qps: number;
  sent: number;
  completed: number;
  lost: number;
  latencies: number[];
}

/** Runs dnsperf; with `verbose`, collects every query's latency (seconds) from its per-query lines. */
function dnsperf(
  port: number,
  queryFile: string,
  seconds: number,
  opts: { qps?: number; verbose?: boolean },
): Promise<PerfResult> {
  const args = [
    '-s',
    '127.0.0.1',
    '-p',
    String(port),
    '-d',
    queryFile,
    '-l',
    String(seconds),
    '-q',
    '200',
    '-c',
    '1',
    '-T',
    '1',
  ];
  if (opts.qps) args.push('-Q', String(opts.qps));
  if (opts.verbose) args.push('-v');
  return new Promise((resolve, reject) => {
    const child = spawn('dnsperf', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const latencies: number[] = [];
    let summary = '';
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      // Per-query lines look like "> NOERROR h1.c1.xcc.test A 0.000123".
      if (line.startsWith('> ')) {
        const seconds = Number(line.slice(line.lastIndexOf(' ') + 1));
        if (Number.isFinite(seconds)) latencies.push(seconds);
      } else summary += `${line}\n`;
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const num = (re: RegExp) => Number(re.exec(summary)?.[1] ?? NaN);
      const qps = num(/Queries per second:\s+([\d.]+)/);
      if (code !== 0 || !Number.isFinite(qps))
        return reject(new Error(`dnsperf failed (${code}):\n${summary}${stderr}`));
      resolve({
        qps,
        sent: num(/Queries sent:\s+(\d+)/),
        completed: num(/Queries completed:\s+(\d+)/),
        lost: num(/Queries lost:\s+(\d+)/),
        latencies,
      });
    });
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) / 1024;
}

/** VmRSS of a process and of its children (the --workers processes). */
function treeRssMb(pid: number): number {
  let total = rssMb(pid);
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
    for (const child of children ? children.split(' ') : []) total += treeRssMb(Number(child));
  }
  return total;
}

/** Starts the dns-server on the records file and waits until /readyz says the records are in. */
async function startOurs(file: string, workers: number): Promise<{ server: DnsProcess; loadMs: number }> {
  const began = Date.now();
  const server = await startDnsServer(
    ['--zone', ZONE, '--records-file', file, '--workers', String(workers)],
    {
      health: true,
    },
  );
  for (;;) {
    const res = await fetch(`http://127.0.0.1:${server.healthPort}/readyz`);
    if (res.status === 200) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return { server, loadMs: Date.now() - began };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      records: { type: 'string', default: '100000' },
      seconds: { type: 'string', default: '10' },
      'latency-qps': { type: 'string', default: '20000' },
      'latency-seconds': { type: 'string', default: '5' },
      workers: { type: 'string', default: '2' },
    },
  });
  const wanted = Number(values.records);
  const seconds = Number(values.seconds);
  const latencyQps = Number(values['latency-qps']);
  const workers = Number(values.workers);
  // generateZone makes about 1.53 records per host and 2.45 per gateway, plus a few fixed ones.
  const gateways = Math.max(10, Math.round(wanted / 50));
  const hosts = Math.max(10, Math.round((wanted - gateways * 2.45) / 1.533));
  const zone = generateZone({ hosts, gateways }, ZONE);
  const records = zone.records.reduce((n, r) => n + r.values.length, 0);

  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-bench-'));
  const processes: DnsProcess[] = [];
  try {
    const file = path.join(dir, 'records.yaml');
    writeFileSync(
      file,
      asRecordSets(zone.records, 500)
        .map((s) => stringify(s))
        .join('---\n'),
    );

    // Queries: names that exist, wildcard synthesis, NXDOMAIN and NODATA, case mixed.
    const rnd = prng(11);
    const lines: string[] = [];
    for (let i = 0; i < 200_000; i++) {
      const roll = rnd();
      const h = Math.floor(rnd() * hosts);
      const g = Math.floor(rnd() * gateways);
      if (roll < 0.6) lines.push(`h${h}.c${h % 17}.${ZONE} A`);
      else if (roll < 0.8) lines.push(`app${i % 50}.gateway.cluster-${g % 7}.team-${g}.clusters.${ZONE} A`);
      else if (roll < 0.9) lines.push(`missing${h}.c${h % 17}.${ZONE} A`);
      else lines.push(`H${h}.C${h % 17}.XCC.test ${h % 3 === 0 ? 'MX' : 'AAAA'}`);
    }
    const queryFile = path.join(dir, 'queries.txt');
    writeFileSync(queryFile, `${lines.join('\n')}\n`);

    process.stderr.write(`zone: ${records} records (${hosts} hosts, ${gateways} wildcard gateways)\n`);
    const { server: ours, loadMs } = await startOurs(file, 1);
    processes.push(ours);
    const metrics = await (await fetch(`http://127.0.0.1:${ours.healthPort}/metrics`)).text();
    const served = Number(/capi_dns_server_records (\d+)/.exec(metrics)?.[1]);
    const rssLoaded = rssMb(ours.child.pid!);

    const nsd = await startNsd(
      ZONE,
      zoneFile(zone, {
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

    const results: Record<string, { max: PerfResult; fixed: PerfResult }> = {};
    const measure = async (name: string, server: DnsProcess) => {
      await dnsperf(server.port, queryFile, 2, {}); // warm-up
      const max = await dnsperf(server.port, queryFile, seconds, {});
      const fixed = await dnsperf(server.port, queryFile, Number(values['latency-seconds']), {
        qps: latencyQps,
        verbose: true,
      });
      fixed.latencies.sort((a, b) => a - b);
      results[name] = { max, fixed };
    };
    await measure('nsd', nsd);
    await measure('dns-server', ours);
    const rssAfter = rssMb(ours.child.pid!);
    // Latency while the records file changes and everything is rebuilt (in a worker thread):
    // queries go on being answered from the previous data.
    const duringRebuild = dnsperf(ours.port, queryFile, 10, { qps: latencyQps, verbose: true });
    await new Promise((r) => setTimeout(r, 1000));
    writeFileSync(
      file,
      `${readFileSync(file, 'utf8')}---\n${stringify(asRecordSets([{ name: `extra.${ZONE}`, type: 'A', ttl: 30, values: ['10.9.9.9'] }], 1)[0])}`,
    );
    const rebuild = await duringRebuild;
    rebuild.latencies.sort((a, b) => a - b);
    const rssRebuilt = rssMb(ours.child.pid!);
    // The same with N answering processes; the single one stopped first (they would share the CPUs).
    let multi: { name: string; loadMs: number; rssLoaded: number; rssAfter: number } | undefined;
    if (workers > 1) {
      await ours.stop();
      const { server, loadMs: multiLoadMs } = await startOurs(file, workers);
      processes.push(server);
      const name = `dns-server ×${workers}`;
      const multiRss = treeRssMb(server.child.pid!);
      await measure(name, server);
      multi = { name, loadMs: multiLoadMs, rssLoaded: multiRss, rssAfter: treeRssMb(server.child.pid!) };
      await server.stop();
    }

    const ms = (s: number) => `${(s * 1000).toFixed(3)} ms`;
    const out: string[] = [
      `records served: ${served} (dns-server loaded and ready in ${loadMs} ms)`,
      `dns-server RSS: ${rssLoaded.toFixed(1)} MB loaded, ${rssAfter.toFixed(1)} MB after the runs`,
      ...(multi
        ? [
            `${multi.name} RSS (all processes): ${multi.rssLoaded.toFixed(1)} MB loaded, ${multi.rssAfter.toFixed(1)} MB after the runs (ready in ${multi.loadMs} ms)`,
          ]
        : []),
      '',
      `throughput (dnsperf, ${seconds} s, 200 outstanding, saturating):`,
    ];
    for (const [name, r] of Object.entries(results))
      out.push(
        `  ${name.padEnd(14)} ${r.max.qps.toFixed(0).padStart(8)} qps  (sent ${r.max.sent}, lost ${r.max.lost})`,
      );
    for (const name of Object.keys(results).filter((n) => n !== 'nsd'))
      out.push(`  ratio ${name} / nsd: ${(results[name]!.max.qps / results['nsd']!.max.qps).toFixed(2)}`);
    const lr = rebuild.latencies;
    out.push(
      '',
      `dns-server during a full rebuild (records file changed 1 s into 10 s at ${latencyQps} qps):`,
      `  p50 ${ms(percentile(lr, 50))}  p99 ${ms(percentile(lr, 99))}  max ${ms(lr[lr.length - 1] ?? NaN)}  (${lr.length} queries, lost ${rebuild.lost}); RSS after ${rssRebuilt.toFixed(1)} MB`,
    );
    out.push('', `latency at ${latencyQps} qps (dnsperf -Q, per-query times):`);
    for (const [name, r] of Object.entries(results)) {
      const l = r.fixed.latencies;
      out.push(
        `  ${name.padEnd(14)} p50 ${ms(percentile(l, 50))}  p90 ${ms(percentile(l, 90))}  p99 ${ms(percentile(l, 99))}  max ${ms(l[l.length - 1] ?? NaN)}  (${l.length} queries, lost ${r.fixed.lost})`,
      );
    }
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
