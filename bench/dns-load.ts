// What the DNS benchmarks share: the generated zone and query file, dnsperf
// runs and the description of the machine the figures come from.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { stringify } from 'yaml';
import { asRecordSets, generateZone, prng, type GeneratedZone } from '../test/support/dnszone.js';
import { stopChild } from '../test/support/stop-child.js';
import { DNS_SERVER_NODE_FLAGS } from '../scripts/images/dns-server-node-flags.js';

export const ZONE = 'xcc.test';

export interface Workload {
  zone: GeneratedZone;
  /** Records in the zone (values counted one by one). */
  records: number;
  hosts: number;
  gateways: number;
  /** DNSRecordSet YAML for the dns-server. */
  recordsFile: string;
  /** dnsperf's query file. */
  queryFile: string;
}

/**
 * Writes about `wanted` records into `dir` and 200,000 queries: 60 % existing names, 20 %
 * wildcard synthesis, 10 % NXDOMAIN, 10 % NODATA, mixed case.
 */
export function writeWorkload(dir: string, wanted: number): Workload {
  // generateZone makes about 1.53 records per host and 2.45 per gateway, plus a few fixed ones.
  const gateways = Math.max(10, Math.round(wanted / 50));
  const hosts = Math.max(10, Math.round((wanted - gateways * 2.45) / 1.533));
  const zone = generateZone({ hosts, gateways }, ZONE);
  const records = zone.records.reduce((n, r) => n + r.values.length, 0);
  const recordsFile = path.join(dir, 'records.yaml');
  writeFileSync(
    recordsFile,
    asRecordSets(zone.records, 500)
      .map((s) => stringify(s))
      .join('---\n'),
  );
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
  return { zone, records, hosts, gateways, recordsFile, queryFile };
}

export interface PerfResult {
  qps: number;
  sent: number;
  completed: number;
  lost: number;
  /** Per-query latencies in seconds, sorted (only with `verbose`). */
  latencies: number[];
}

/** Runs dnsperf (one client thread, 200 outstanding); with `verbose`, collects every query's latency. */
export function dnsperf(
  port: number,
  queryFile: string,
  seconds: number,
  opts: { qps?: number; verbose?: boolean; dnssecOk?: boolean; edns?: boolean } = {},
): Promise<PerfResult> {
  const args = ['-s', '127.0.0.1', '-p', String(port), '-d', queryFile, '-l', String(seconds)];
  args.push('-q', '200', '-c', '1', '-T', '1');
  // -D sets EDNS with DO; -e EDNS alone (what resolvers send since DNS Flag Day 2020).
  if (opts.dnssecOk) args.push('-D');
  else if (opts.edns) args.push('-e');
  if (opts.qps) args.push('-Q', String(Math.round(opts.qps)));
  if (opts.verbose) args.push('-v');
  return new Promise((resolve, reject) => {
    const child = spawn('dnsperf', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const latencies: number[] = [];
    let summary = '';
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      // Per-query lines look like "> NOERROR h1.c1.xcc.test A 0.000123".
      if (line.startsWith('> ')) {
        const s = Number(line.slice(line.lastIndexOf(' ') + 1));
        if (Number.isFinite(s)) latencies.push(s);
      } else summary += `${line}\n`;
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const num = (re: RegExp) => Number(re.exec(summary)?.[1] ?? NaN);
      const qps = num(/Queries per second:\s+([\d.]+)/);
      if (code !== 0 || !Number.isFinite(qps))
        return reject(new Error(`dnsperf ${args.join(' ')} failed (${code}):\n${summary}${stderr}`));
      latencies.sort((a, b) => a - b);
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

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** CPU model, cores, kernel, Node, NSD and dnsperf versions, and the load average right now. */
export function machine(): string {
  const cpus = os.cpus();
  // NSD prints its version on stderr, dnsperf in its usage text (exiting 1): read both streams.
  const version = (cmd: string, args: string[], re: RegExp) => {
    const r = spawnSync(cmd, args, { encoding: 'utf8' });
    return (
      re.exec(`${r.stdout ?? ''}${r.stderr ?? ''}`)?.[1] ?? `unknown (${r.error?.message ?? 'no version'})`
    );
  };
  return [
    `machine: ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, Linux ${os.release()}, Node ${process.version}`,
    `         NSD ${version('nsd', ['-v'], /NSD version (\S+)/)}, dnsperf ${version('dnsperf', ['-h'], /Version (\S+)/)}`,
    `         ${loadAverage()}`,
  ].join('\n');
}

export function loadAverage(): string {
  return `load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;
}

export interface ServerProcess {
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts `<dist>/dns-server/main.js` of any build (with `nodeArgs` such as --cpu-prof) on a
 * loopback port with the records file, and resolves once /readyz says the records are in.
 */
export async function startBuild(
  dist: string,
  recordsFile: string,
  opts: { nodeArgs?: string[]; args?: string[] } = {},
): Promise<ServerProcess> {
  const args = [
    // As deployed (the image's entrypoint), then what the bench adds.
    ...DNS_SERVER_NODE_FLAGS,
    ...(opts.nodeArgs ?? []),
    path.join(dist, 'dns-server', 'main.js'),
    ...['--listen', '127.0.0.1:0', '--health-listen', '127.0.0.1:0', '--zone', ZONE],
    ...['--records-file', recordsFile, ...(opts.args ?? [])],
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const stop = () => stopChild(child, 5000);
  let logs = '';
  try {
    const where = await new Promise<{ listen: string; healthListen: string }>((resolve, reject) => {
      readline.createInterface({ input: child.stderr! }).on('line', (line) => {
        logs += `${line}\n`;
        if (line.includes('"msg":"serving"'))
          resolve(JSON.parse(line) as { listen: string; healthListen: string });
      });
      child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited (${code}):\n${logs}`)));
    });
    const portOf = (hp: string) => Number(hp.slice(hp.lastIndexOf(':') + 1));
    const deadline = Date.now() + 60_000;
    while ((await fetch(`http://127.0.0.1:${portOf(where.healthListen)}/readyz`)).status !== 200) {
      if (Date.now() > deadline) throw new Error(`${args.join(' ')} not ready after 60 s:\n${logs}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return { port: portOf(where.listen), child, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
