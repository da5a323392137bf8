// What 1,000 hostile TCP connections cost one dns-server process, and what
// its ordinary clients see meanwhile. Each build given (this one and, with
// --reference, another, e.g. main's) answers the same zone and gets the same
// attack in turn, interleaved run by run:
//
//   - bursters: connections that send 64 KB of pipelined queries for a 32 KB
//     answer and never read (each from one of several 127.0.1.x addresses);
//   - slow senders: connections that send one octet of a query every second;
//   - a flood: connections opened and left idle, then new ones, until the
//     attack ends;
// while an ordinary UDP client and an ordinary TCP client (a new connection
// per query, as a resolver retrying after a truncated answer does) ask at a
// fixed rate. Prints the idle and peak resident memory (VmRSS before, VmHWM
// after) and the ordinary clients' p50/p99 and losses, per run, side by side.
// Only loopback addresses; every loop bounded in count and time.
//
//   node dist/bench/dns-abuse.js [--reference dist/ab/main] [--runs 2] [--seconds 15] [--connections 1000] [--pod-sysctls]
//
// --flood runs issue 36's flood instead, NSD beside the builds (bench/README.md):
//
//   node dist/bench/dns-abuse.js --flood [--reference dist/ab/base] [--runs 2] [--held 500] [--non-readers 50] [--slow 50] [--questions 400] [--qps 20] [--client-delay 0]
//
// --pod-sysctls runs everything in a network namespace of its own (root: unshare) with the socket
// buffer sysctls that config/ sets on the dns-server pod, as a pod has them.
// (a reference build must stay inside the repository, so that it finds node_modules)
import { spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import dnsPacket from 'dns-packet';
import { startNsd } from '../test/support/dns.js';
import { zoneFile } from '../test/support/dnszone.js';
import {
  loadAverage,
  machine,
  percentile,
  startBuild,
  writeWorkload,
  ZONE,
  type ServerProcess,
} from './dns-load.js';
import { memoryMb, treeMemoryMb } from './proc.js';

const BIG = 'big.xcc.test';
/** The pod's socket buffer sysctls, as config/dns-server/deployment.yaml sets them. */
const POD_SYSCTLS = { 'net.ipv4.tcp_wmem': '4096 16384 262144', 'net.ipv4.tcp_rmem': '4096 16384 131072' };
const IN_NETNS = 'CAPI_DNS_ABUSE_IN_NETNS';

/** Runs this bench again inside a new network namespace with the pod's sysctls; returns its exit code. */
function inPodNetns(): number {
  const sysctls = Object.entries(POD_SYSCTLS)
    .map(([k, v]) => `${k}='${v}'`)
    .join(' ');
  const r = spawnSync(
    'unshare',
    [
      '--net',
      '--',
      'sh',
      '-c',
      `ip link set lo up && sysctl -qw ${sysctls} && exec "$0" "$@"`,
      process.execPath,
      ...process.argv.slice(1),
    ],
    { stdio: 'inherit', env: { ...process.env, [IN_NETNS]: '1' } },
  );
  if (r.error) throw new Error(`unshare --net (root needed): ${r.error.message}`);
  return r.status ?? 1;
}
const ORDINARY = 'h1.c1.xcc.test';

interface RunResult {
  build: string;
  idleMb: number;
  peakMb: number;
  hostileOpen: number;
  udp: ClientFigures;
  tcp: ClientFigures;
}

interface ClientFigures {
  sent: number;
  lost: number;
  p50: number;
  p99: number;
  /** TCP answers over 50 ms, as "asked at ms: connect ms+answer ms" (what --flood prints under a run). */
  slow?: string[];
}

function query(name: string, id: number): Buffer {
  return dnsPacket.encode({ type: 'query', id, questions: [{ type: 'A', name }] });
}

function framed(msg: Buffer): Buffer {
  const out = Buffer.alloc(2 + msg.length);
  out.writeUInt16BE(msg.length, 0);
  msg.copy(out, 2);
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One hostile connection; errors (resets by the server) end it quietly, which is what the server should do. */
function hostile(
  port: number,
  localAddress: string,
  onOpen: (s: net.Socket) => void,
  all: Set<net.Socket>,
): void {
  const s = net.connect({ port, host: '127.0.0.1', localAddress }, () => onOpen(s));
  all.add(s);
  s.on('error', () => undefined);
  s.on('close', () => all.delete(s));
}

/** Asks one name at `qps` until `until` or `count` questions; each answer's time, or a loss after 1 s. */
async function ordinaryUdp(
  port: number,
  qps: number,
  until: number,
  count = Infinity,
): Promise<ClientFigures> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', () => r()));
  const sentAt = new Map<number, number>();
  const times: number[] = [];
  socket.on('message', (msg) => {
    const id = msg.readUInt16BE(0);
    const at = sentAt.get(id);
    if (at === undefined) return;
    sentAt.delete(id);
    times.push(performance.now() - at);
  });
  let sent = 0;
  let lost = 0;
  while (Date.now() < until && sent < count) {
    const id = sent++ & 0xffff;
    sentAt.set(id, performance.now());
    socket.send(query(ORDINARY, id), port, '127.0.0.1');
    await sleep(1000 / qps);
    for (const [i, at] of sentAt)
      if (performance.now() - at > 1000) {
        sentAt.delete(i);
        lost++;
      }
  }
  await sleep(1000);
  lost += sentAt.size;
  socket.close();
  const sorted = times.sort((a, b) => a - b);
  return { sent, lost, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

/** One query per new TCP connection; a refused, reset or unanswered (1 s) query is lost. */
async function ordinaryTcp(
  port: number,
  qps: number,
  until: number,
  count = Infinity,
): Promise<ClientFigures> {
  const times: number[] = [];
  /** Answers over 50 ms: when asked (ms after the first), and the connect + answer split. */
  const slow: string[] = [];
  let sent = 0;
  let lost = 0;
  const one = (id: number) =>
    new Promise<void>((resolve) => {
      const began = performance.now();
      let connectedAt = 0;
      const s = net.connect({ port, host: '127.0.0.1' }, () => {
        connectedAt = performance.now();
        s.write(framed(query(ORDINARY, id)));
      });
      const fail = () => (lost++, s.destroy(), resolve());
      const timer = setTimeout(fail, 1000);
      let got = Buffer.alloc(0);
      s.on('data', (d: Buffer) => {
        got = Buffer.concat([got, d]);
        if (got.length >= 2 && got.length >= 2 + got.readUInt16BE(0)) {
          clearTimeout(timer);
          times.push(performance.now() - began);
          if (performance.now() - began > 50)
            slow.push(
              `${(began - t0).toFixed(0)}: ${(connectedAt - began).toFixed(0)}+${(performance.now() - connectedAt).toFixed(0)}`,
            );
          s.destroy();
          resolve();
        }
      });
      s.on('error', () => (clearTimeout(timer), fail()));
    });
  const pending: Promise<void>[] = [];
  const t0 = performance.now();
  while (Date.now() < until && sent < count) {
    pending.push(one(sent++ & 0xffff));
    await sleep(1000 / qps);
  }
  await Promise.all(pending);
  const sorted = times.sort((a, b) => a - b);
  return { sent, lost, p50: percentile(sorted, 50), p99: percentile(sorted, 99), slow };
}

async function attack(
  build: string,
  server: ServerProcess,
  opts: { seconds: number; connections: number },
): Promise<RunResult> {
  const pid = server.child.pid!;
  await sleep(2000);
  const idleMb = memoryMb(pid, 'VmRSS');
  const all = new Set<net.Socket>();
  const until = Date.now() + opts.seconds * 1000;
  const burst = Buffer.concat(Array.from({ length: 2200 }, (_, i) => framed(query(BIG, i))));
  const drip = framed(query(ORDINARY, 1));
  const timers: NodeJS.Timeout[] = [];
  const third = Math.floor(opts.connections / 3);
  // Spread over addresses: 40 connections each, under the default per-client cap of 100, so that
  // the server-wide limits are what is measured.
  const address = (group: number, i: number) => `127.0.${group}.${1 + Math.floor(i / 40)}`;
  const udp = ordinaryUdp(server.port, 200, until);
  const tcp = ordinaryTcp(server.port, 20, until);
  for (let i = 0; i < third; i++)
    hostile(server.port, address(1, i), (s) => (s.pause(), s.write(burst)), all);
  for (let i = 0; i < third; i++)
    hostile(
      server.port,
      address(2, i),
      (s) => {
        let sent = 0;
        const t = setInterval(
          () => (sent < drip.length ? s.write(drip.subarray(sent, ++sent)) : undefined),
          1000,
        );
        timers.push(t);
      },
      all,
    );
  // The flood: a new idle connection every 10 ms from the third group, up to its share open.
  let flooded = 0;
  const flood = setInterval(() => {
    if (Date.now() >= until) return;
    hostile(server.port, address(3, flooded++ % third), () => undefined, all);
  }, 10);
  timers.push(flood);
  let hostileOpen = 0;
  while (Date.now() < until) {
    hostileOpen = Math.max(hostileOpen, all.size);
    await sleep(500);
  }
  const [u, t] = await Promise.all([udp, tcp]);
  const peakMb = memoryMb(pid, 'VmHWM');
  for (const timer of timers) clearInterval(timer);
  for (const s of all) s.destroy();
  return { build, idleMb, peakMb, hostileOpen, udp: u, tcp: t };
}

/** A server under the flood: a dns-server build or NSD. */
interface Target {
  name: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

interface FloodOptions {
  held: number;
  nonReaders: number;
  slow: number;
  questions: number;
  qps: number;
  /** The well-behaved client starts this long after the flood. */
  clientDelayMs: number;
}

interface FloodResult {
  target: string;
  idleMb: number;
  peakMb: number;
  /** Hostile connections open at once (client side), the most seen. */
  hostileOpen: number;
  /** Hostile connections the server closed (or refused) during the run. */
  closedByServer: number;
  /** How long a slow sender lived, median, in seconds (NaN when none was closed). */
  slowLifetimeS: number;
  udp: ClientFigures;
  tcp: ClientFigures;
}

/**
 * Keeps `count` hostile connections open from `group`'s addresses (40 an address, under the
 * default per-client cap): each one the server closes is replaced after 100 ms, so that the
 * attacker holds its number all along without spinning against a server that refuses.
 */
function keepOpen(
  port: number,
  group: number,
  count: number,
  onOpen: (s: net.Socket) => void,
  all: Set<net.Socket>,
  stopped: () => boolean,
  onClosed: (livedMs: number) => void,
): void {
  const one = (i: number) => {
    if (stopped()) return;
    const began = performance.now();
    const s = net.connect(
      { port, host: '127.0.0.1', localAddress: `127.0.${group}.${1 + Math.floor(i / 40)}` },
      () => onOpen(s),
    );
    all.add(s);
    s.on('error', () => undefined);
    s.on('close', () => {
      all.delete(s);
      if (stopped()) return;
      onClosed(performance.now() - began);
      setTimeout(() => one(i), 100);
    });
  };
  for (let i = 0; i < count; i++) one(i);
}

/**
 * Issue 36's flood: `held` connections opened and held (reopened when closed), `nonReaders` that
 * send 64 KB of pipelined queries for the 32 KB answer and never read, slow senders `slow` at a
 * time (one octet a second, replaced when closed); 1 s after it starts, a well-behaved client asks
 * `questions` over UDP and as many over TCP (a new connection each) at `qps` each.
 */
async function floodRun(target: Target, opts: FloodOptions): Promise<FloodResult> {
  await sleep(2000);
  const idleMb = treeMemoryMb(target.pid, 'VmRSS');
  const all = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  let closedByServer = 0;
  const slowLives: number[] = [];
  const burst = Buffer.concat(Array.from({ length: 2200 }, (_, i) => framed(query(BIG, i))));
  const drip = framed(query(ORDINARY, 1));
  const counted = () => closedByServer++;
  const client = wellBehaved(target.port, opts);
  await client.ready;
  keepOpen(
    target.port,
    1,
    opts.held,
    () => undefined,
    all,
    () => stopped,
    counted,
  );
  keepOpen(
    target.port,
    2,
    opts.nonReaders,
    (s) => (s.pause(), s.write(burst)),
    all,
    () => stopped,
    counted,
  );
  keepOpen(
    target.port,
    3,
    opts.slow,
    (s) => {
      let sent = 0;
      const t = setInterval(
        () => (sent < drip.length ? s.write(drip.subarray(sent, ++sent)) : undefined),
        1000,
      );
      timers.add(t);
      s.on('close', () => (clearInterval(t), timers.delete(t)));
    },
    all,
    () => stopped,
    (ms) => (counted(), slowLives.push(ms)),
  );
  let hostileOpen = 0;
  const watch = setInterval(() => (hostileOpen = Math.max(hostileOpen, all.size)), 100);
  await sleep(opts.clientDelayMs);
  client.go();
  const { udp, tcp } = await client.figures;
  const peakMb = treeMemoryMb(target.pid, 'VmHWM');
  stopped = true;
  clearInterval(watch);
  for (const t of timers) clearInterval(t);
  for (const s of all) s.destroy();
  slowLives.sort((a, b) => a - b);
  return {
    target: target.name,
    idleMb,
    peakMb,
    hostileOpen,
    closedByServer,
    slowLifetimeS: percentile(slowLives, 50) / 1000,
    udp,
    tcp,
  };
}

/**
 * The well-behaved client in a thread of its own: opening 600 connections and writing 3 MB of
 * bursts keeps this thread's event loop busy for a few hundred milliseconds, which would be
 * counted as the server's latency if the client timed its answers here. `ready` resolves once the
 * thread is loaded; it asks its first question when `go` is called, so that it starts at the
 * same moment of the flood every run.
 */
function wellBehaved(
  port: number,
  opts: FloodOptions,
): { ready: Promise<void>; go(): void; figures: Promise<{ udp: ClientFigures; tcp: ClientFigures }> } {
  const worker = new Worker(new URL(import.meta.url), {
    workerData: { role: 'well-behaved', port, qps: opts.qps, questions: opts.questions },
  });
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  const figures = new Promise<{ udp: ClientFigures; tcp: ClientFigures }>((resolve, reject) => {
    worker.on('message', (m: 'ready' | { udp: ClientFigures; tcp: ClientFigures }) =>
      m === 'ready' ? onReady() : resolve(m),
    );
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`well-behaved client exited (${code}) without figures`)));
  });
  figures.catch(() => onReady());
  return { ready, go: () => worker.postMessage('go'), figures };
}

async function wellBehavedThread(data: { port: number; qps: number; questions: number }): Promise<void> {
  await new Promise<void>((resolve) => {
    parentPort!.once('message', () => resolve());
    parentPort!.postMessage('ready');
  });
  const [udp, tcp] = await Promise.all([
    ordinaryUdp(data.port, data.qps, Infinity, data.questions),
    ordinaryTcp(data.port, data.qps, Infinity, data.questions),
  ]);
  parentPort!.postMessage({ udp, tcp });
}

const FLOOD_HEADER = `${'server'.padEnd(16)} ${'idle MB'.padStart(7)} ${'peak MB'.padStart(7)} ${'hostile'.padStart(7)} ${'closed'.padStart(6)} ${'slow s'.padStart(6)}   ${'UDP p50 / p99, lost'.padEnd(30)} ${'TCP (new conn) p50 / p99, lost'.padEnd(30)}`;

function floodRow(r: FloodResult): string {
  const c = (f: ClientFigures) =>
    `${f.p50.toFixed(2)} / ${f.p99.toFixed(1)} ms, lost ${f.lost}/${f.sent}`.padEnd(30);
  return `${r.target.padEnd(16)} ${r.idleMb.toFixed(0).padStart(7)} ${r.peakMb.toFixed(0).padStart(7)} ${String(r.hostileOpen).padStart(7)} ${String(r.closedByServer).padStart(6)} ${r.slowLifetimeS.toFixed(1).padStart(6)}   ${c(r.udp)} ${c(r.tcp)}`;
}

/** --flood: each build and NSD (tcp-count as the dns-server's default cap) in turn, interleaved. */
async function floodMain(
  builds: [string, string][],
  recordsFile: string,
  zoneText: string,
  runs: number,
  opts: FloodOptions,
): Promise<void> {
  process.stdout.write(
    `flood: ${opts.held} held, ${opts.nonReaders} never reading, ${opts.slow} slow senders at a time; well-behaved client ${opts.questions} UDP + ${opts.questions} TCP questions at ${opts.qps}/s each\n` +
      `NSD: server-count 1, tcp-count 1000 (the dns-server's --tcp-max-connections default), other TCP settings its defaults\n\n`,
  );
  const starters: [string, () => Promise<Target>][] = [
    [
      'nsd',
      async () => {
        const nsd = await startNsd(ZONE, zoneText, { tcpCount: 1000 });
        return { name: 'nsd', port: nsd.port, pid: nsd.child.pid!, stop: () => nsd.stop() };
      },
    ],
    ...builds.map(([name, dist]): [string, () => Promise<Target>] => [
      name,
      async () => {
        const server = await startBuild(path.resolve(dist), recordsFile);
        return { name, port: server.port, pid: server.child.pid!, stop: () => server.stop() };
      },
    ]),
  ];
  const results: FloodResult[] = [];
  for (let run = 1; run <= runs; run++) {
    const order = run % 2 ? starters : [...starters].reverse();
    for (const [, start] of order) {
      const target = await start();
      try {
        const r = await floodRun(target, opts);
        results.push(r);
        process.stdout.write(`run ${run}: ${floodRow(r)}   (${loadAverage()})\n`);
        if (r.tcp.slow?.length)
          process.stdout.write(
            `       TCP answers over 50 ms (asked at ms: connect+answer ms): ${r.tcp.slow.join(', ')}\n`,
          );
      } finally {
        await target.stop();
      }
    }
  }
  process.stdout.write(`\n${FLOOD_HEADER}\n`);
  for (const r of results) process.stdout.write(`${floodRow(r)}\n`);
  const p99s = (name: string) => results.filter((r) => r.target === name).map((r) => r.tcp.p99);
  process.stdout.write('\nwell-behaved TCP p99, spread over runs:\n');
  for (const [name] of starters) {
    const v = p99s(name);
    process.stdout.write(
      `  ${name.padEnd(16)} ${Math.min(...v).toFixed(1)}–${Math.max(...v).toFixed(1)} ms\n`,
    );
  }
}

function row(r: RunResult): string {
  const c = (f: ClientFigures) =>
    `${f.p50.toFixed(2)} / ${f.p99.toFixed(2)} ms, lost ${f.lost}/${f.sent}`.padEnd(32);
  return `${r.build.padEnd(16)} ${r.idleMb.toFixed(0).padStart(7)} ${r.peakMb.toFixed(0).padStart(7)} ${(r.peakMb / r.idleMb).toFixed(2).padStart(6)}x ${String(r.hostileOpen).padStart(6)}   ${c(r.udp)} ${c(r.tcp)}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      reference: { type: 'string' },
      runs: { type: 'string', default: '2' },
      seconds: { type: 'string', default: '15' },
      connections: { type: 'string', default: '1000' },
      records: { type: 'string', default: '20000' },
      'pod-sysctls': { type: 'boolean', default: false },
      flood: { type: 'boolean', default: false },
      held: { type: 'string', default: '500' },
      'non-readers': { type: 'string', default: '50' },
      slow: { type: 'string', default: '50' },
      questions: { type: 'string', default: '400' },
      qps: { type: 'string', default: '20' },
      'client-delay': { type: 'string', default: '0' },
    },
  });
  if (values['pod-sysctls'] && !process.env[IN_NETNS]) process.exit(inPodNetns());
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-abuse-'));
  const builds: [string, string][] = [['this build', 'dist']];
  if (values.reference) builds.push([path.basename(values.reference), values.reference]);
  const results: RunResult[] = [];
  try {
    const load = writeWorkload(dir, Number(values.records));
    const values2000 = Array.from({ length: 2000 }, (_, i) => `"10.2.${i >> 8}.${i & 255}"`).join(', ');
    appendFileSync(
      load.recordsFile,
      `---\napiVersion: connectivity.tanzu.vmware.com/v1alpha1\nkind: DNSRecordSet\nmetadata: {name: big}\nspec:\n  records:\n  - {name: "${BIG}", type: A, values: [${values2000}]}\n`,
    );
    const buffers = process.env[IN_NETNS]
      ? `own network namespace, ${Object.entries(POD_SYSCTLS)
          .map(([k, v]) => `${k}="${v}"`)
          .join(', ')}`
      : `host network namespace, net.ipv4.tcp_wmem="${readFileSync('/proc/sys/net/ipv4/tcp_wmem', 'utf8').trim().replace(/\s+/g, ' ')}"`;
    if (values.flood) {
      process.stdout.write(
        `${machine()}\nsockets: ${buffers}\nzone: ${load.records} records and ${BIG} (2,000 A, a 32 KB answer)\n`,
      );
      const soa = { mname: `ns1.${ZONE}`, rname: `hostmaster.${ZONE}`, serial: 1, refresh: 3600, retry: 600 };
      const zoneText =
        zoneFile(load.zone, { ...soa, expire: 86400, minimum: 30, ttl: 30 }) +
        Array.from({ length: 2000 }, (_, i) => `${BIG}. 30 IN A 10.2.${i >> 8}.${i & 255}\n`).join('');
      await floodMain(builds, load.recordsFile, zoneText, Number(values.runs), {
        held: Number(values.held),
        nonReaders: Number(values['non-readers']),
        slow: Number(values.slow),
        questions: Number(values.questions),
        qps: Number(values.qps),
        clientDelayMs: Number(values['client-delay']) * 1000,
      });
      return;
    }
    process.stdout.write(
      `${machine()}\nsockets: ${buffers}\nzone: ${load.records} records and ${BIG} (2,000 A, a 32 KB answer); ${values.connections} hostile connections for ${values.seconds} s per run\n\n`,
    );
    for (let run = 1; run <= Number(values.runs); run++) {
      // Alternate which build goes first, so that neither always follows the other's load.
      const order = run % 2 ? builds : [...builds].reverse();
      for (const [name, dist] of order) {
        const server = await startBuild(path.resolve(dist), load.recordsFile);
        try {
          const r = await attack(name, server, {
            seconds: Number(values.seconds),
            connections: Number(values.connections),
          });
          results.push(r);
          process.stdout.write(`run ${run}: ${row(r)}   (${loadAverage()})\n`);
        } finally {
          await server.stop();
        }
      }
    }
    process.stdout.write(
      `\n${'build'.padEnd(16)} ${'idle MB'.padStart(7)} ${'peak MB'.padStart(7)} ${'peak/idle'.padStart(7)} ${'hostile'.padStart(6)}   ${'UDP p50 / p99, lost'.padEnd(32)} ${'TCP (new conn) p50 / p99, lost'.padEnd(32)}\n`,
    );
    for (const r of results) process.stdout.write(`${row(r)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const role = isMainThread ? 'main' : (workerData as { role: string }).role;
(role === 'well-behaved'
  ? wellBehavedThread(workerData as { port: number; qps: number; questions: number })
  : main()
).catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
