// Processes for DNS tests and benchmarks: our dns-server, NSD and CoreDNS on
// loopback ports, each stopped (and its files removed) by stop(), and killed
// anyway if the test process exits first.
import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { decode } from 'dns-packet';
import { eventually } from './kube.js';
import { binPath, repoRoot } from './paths.js';
import { stopChild } from './stop-child.js';
import { withTimeout } from '../../operator/manager/runtime/equal.js';
import { DNS_SERVER_NODE_FLAGS } from '../../scripts/images/dns-server-node-flags.js';

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export interface DnsProcess {
  port: number;
  /** Port of --health-listen, when asked for. */
  healthPort?: number;
  dir: string;
  child: ChildProcess;
  /** Everything the process wrote to stderr so far (our server logs JSON there). */
  logs(): string;
  stop(): Promise<void>;
}

function track(child: ChildProcess, dir: string | undefined): () => Promise<void> {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return async () => {
    await stopChild(child, 5000);
    if (dir) rmSync(dir, { recursive: true, force: true });
  };
}

/**
 * Starts dist/dns-server/main.js on 127.0.0.1, port 0 unless `args` says otherwise (the server
 * reports the port it got). Resolves once it serves.
 */
export async function startDnsServer(args: string[], opts: { health?: boolean } = {}): Promise<DnsProcess> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-server-'));
  const full = [
    ...DNS_SERVER_NODE_FLAGS,
    path.join(repoRoot(), 'dist', 'dns-server', 'main.js'),
    ...(args.includes('--listen') ? [] : ['--listen', '127.0.0.1:0']),
    ...(opts.health ? ['--health-listen', '127.0.0.1:0'] : []),
    // No lame-duck period unless a test asks for one: stopping a test's server waits for nothing.
    ...(args.includes('--lameduck') ? [] : ['--lameduck', '0s']),
    ...args,
  ];
  const child = spawn(process.execPath, full, { stdio: ['ignore', 'ignore', 'pipe'] });
  const stop = track(child, dir);
  let logs = '';
  const serving = new Promise<{ listen: string; healthListen?: string }>((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stderr! });
    lines.on('line', (line) => {
      logs += `${line}\n`;
      try {
        const entry = JSON.parse(line) as { msg?: string; listen?: string; healthListen?: string };
        if (entry.msg === 'serving') resolve({ listen: entry.listen!, healthListen: entry.healthListen });
      } catch {
        // not JSON
      }
    });
    child.once('exit', (code) => reject(new Error(`dns-server exited (${code}) before serving:\n${logs}`)));
  });
  try {
    const where = await withTimeout(serving, 15_000, 'dns-server start');
    const portOf = (hp: string) => Number(hp.slice(hp.lastIndexOf(':') + 1));
    return {
      port: portOf(where.listen),
      healthPort: where.healthListen ? portOf(where.healthListen) : undefined,
      dir,
      child,
      logs: () => logs,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A port free on 127.0.0.1 for both UDP and TCP right now (for programs that cannot report theirs). */
export async function freePort(): Promise<number> {
  for (;;) {
    const tcp = net.createServer();
    const port = await new Promise<number>((resolve) =>
      tcp.listen(0, '127.0.0.1', () => resolve((tcp.address() as net.AddressInfo).port)),
    );
    const udp = dgram.createSocket('udp4');
    const ok = await new Promise<boolean>((resolve) => {
      udp.once('error', () => resolve(false));
      udp.bind(port, '127.0.0.1', () => resolve(true));
    });
    await new Promise<void>((resolve) => tcp.close(() => resolve()));
    if (ok) {
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      return port;
    }
    udp.close();
  }
}

/** Starts NSD (one server process unless `serverCount`) serving `zoneText` as `zone` on a loopback port. */
export async function startNsd(
  zone: string,
  zoneText: string,
  opts: { minimalResponses?: boolean; tcpCount?: number; serverCount?: number } = {},
): Promise<DnsProcess> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-nsd-'));
  const port = await freePort();
  writeFileSync(path.join(dir, 'zone'), zoneText);
  writeFileSync(
    path.join(dir, 'nsd.conf'),
    `server:
  ip-address: 127.0.0.1@${port}
  server-count: ${opts.serverCount ?? 1}
  zonesdir: "${dir}"
  database: ""
  pidfile: "${dir}/nsd.pid"
  xfrdfile: "${dir}/xfrd.state"
  zonelistfile: "${dir}/zone.list"
  logfile: "${dir}/nsd.log"
  username: ""
  chroot: ""
  verbosity: 1
  minimal-responses: ${opts.minimalResponses === false ? 'no' : 'yes'}
  refuse-any: no
  # Response rate limiting is on by default (200 qps per client network): off, for tests and benchmarks.
  rrl-ratelimit: 0
  rrl-whitelist-ratelimit: 0
${opts.tcpCount ? `  tcp-count: ${opts.tcpCount}\n` : ''}remote-control:
  control-enable: no
zone:
  name: ${zone}
  zonefile: zone
`,
  );
  const nsd = existsSync('/usr/sbin/nsd') ? '/usr/sbin/nsd' : 'nsd';
  const child = spawn(nsd, ['-d', '-c', path.join(dir, 'nsd.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let logs = '';
  child.stderr!.on('data', (d: Buffer) => (logs += d.toString()));
  const stop = track(child, dir);
  const nsdLogs = () =>
    logs + (existsSync(path.join(dir, 'nsd.log')) ? readFileSync(path.join(dir, 'nsd.log'), 'utf8') : '');
  try {
    await waitForDns(port, zone, child, nsdLogs);
  } catch (err) {
    await stop();
    throw err;
  }
  return { port, dir, child, logs: nsdLogs, stop };
}

/** Starts the CoreDNS of the test environment with `corefile` ("{port}" is replaced by its port). */
export async function startCoreDns(corefile: string, probe: string): Promise<DnsProcess> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-coredns-'));
  const port = await freePort();
  writeFileSync(path.join(dir, 'Corefile'), corefile.replaceAll('{port}', String(port)));
  const child = spawn(binPath('coredns'), ['-conf', path.join(dir, 'Corefile')], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let logs = '';
  child.stdout!.on('data', (d: Buffer) => (logs += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (logs += d.toString()));
  const stop = track(child, dir);
  try {
    await waitForDns(port, probe, child, () => logs);
  } catch (err) {
    await stop();
    throw err;
  }
  return { port, dir, child, logs: () => logs, stop };
}

/** Resolves once something answers an SOA query for `name` on the port. */
async function waitForDns(
  port: number,
  name: string,
  child: ChildProcess,
  logs: () => string,
): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited (${child.exitCode}):\n${logs()}`);
    if (await answersOverUdp('127.0.0.1', port, name)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing answers on 127.0.0.1:${port}:\n${logs()}`);
}

/** True once anything answers a SOA query for `name` at address:port over UDP (any RCODE). */
export function answersOverUdp(
  address: string,
  port: number,
  name: string,
  timeoutMs = 300,
): Promise<boolean> {
  const labels = name.split('.').filter(Boolean);
  const qname = Buffer.concat([
    ...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])),
    Buffer.from([0]),
  ]);
  const msg = Buffer.concat([
    Buffer.from([0x12, 0x34, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]),
    qname,
    Buffer.from([0, 6, 0, 1]),
  ]);
  return new Promise((resolve) => {
    const sock = dgram.createSocket('udp4');
    const done = (ok: boolean) => {
      clearTimeout(timer);
      sock.close();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    sock.on('message', () => done(true));
    sock.on('error', () => done(false));
    sock.send(msg, port, address);
  });
}

export interface DigResult {
  stdout: string;
  status: string;
  flags: string[];
  answer: string[];
  authority: string[];
}

/** Runs dig against server (127.0.0.1 unless given):port; `args` as on the command line. */
export function dig(port: number, args: string[], server = '127.0.0.1'): Promise<DigResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('dig', [`@${server}`, '-p', String(port), '+tries=1', '+time=2', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.once('error', reject);
    child.once('exit', () => resolve(parseDig(stdout)));
  });
}

export function parseDig(stdout: string): DigResult {
  const status = /status: (\w+)/.exec(stdout)?.[1] ?? 'NONE';
  const flags = (/;; flags: ([^;]*);/.exec(stdout)?.[1] ?? '').trim().split(/\s+/).filter(Boolean);
  const section = (title: string) => {
    const m = new RegExp(`;; ${title} SECTION:\\n([\\s\\S]*?)(?:\\n\\n|$)`).exec(stdout);
    return m
      ? m[1]!
          .split('\n')
          .filter(Boolean)
          .map((l) => l.replace(/\s+/g, ' '))
      : [];
  };
  return { stdout, status, flags, answer: section('ANSWER'), authority: section('AUTHORITY') };
}

/** Sends one message and returns the response (UDP with two tries, or TCP with the length prefix). */
export function exchange(
  port: number,
  msg: Buffer,
  transport: 'udp' | 'tcp',
  timeoutMs = 2000,
): Promise<Buffer> {
  if (transport === 'tcp') {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      let got = Buffer.alloc(0);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`no TCP response from port ${port}`));
      }, timeoutMs);
      socket.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      socket.on('data', (d: Buffer) => {
        got = Buffer.concat([got, d]);
        if (got.length >= 2 && got.length >= 2 + got.readUInt16BE(0)) {
          clearTimeout(timer);
          socket.destroy();
          resolve(got.subarray(2, 2 + got.readUInt16BE(0)));
        }
      });
      const framed = Buffer.alloc(2 + msg.length);
      framed.writeUInt16BE(msg.length, 0);
      msg.copy(framed, 2);
      socket.write(framed);
    });
  }
  return new Promise((resolve, reject) => {
    const sock = dgram.createSocket('udp4');
    let tries = 0;
    let timer: NodeJS.Timeout;
    const send = () => {
      if (tries++ === 2) {
        sock.close();
        return reject(new Error(`no UDP response from port ${port}`));
      }
      sock.send(msg, port, '127.0.0.1');
      timer = setTimeout(send, timeoutMs / 2);
    };
    sock.on('message', (m) => {
      if (m.length >= 2 && m.readUInt16BE(0) !== msg.readUInt16BE(0)) return;
      clearTimeout(timer);
      sock.close();
      resolve(m);
    });
    send();
  });
}

let queryId = 1;
/** The A addresses a server on 127.0.0.1:port answers for name, asked over TCP. */
export async function addressesAt(port: number, name: string): Promise<string[]> {
  const labels = name.split('.');
  const id = (queryId = (queryId + 1) & 0xffff);
  const q = Buffer.concat([
    Buffer.from([id >> 8, id & 255, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]),
    ...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])),
    Buffer.from([0, 0, 1, 0, 1]),
  ]);
  const packet = decode(await exchange(port, q, 'tcp', 1000));
  return (packet.answers ?? []).flatMap((a) => (a.type === 'A' ? [a.data] : []));
}

/** What a dns-server on 127.0.0.1:port answers for name and type, sorted (dig +short). */
export async function shortAnswer(
  port: number,
  name: string,
  type = 'A',
  extra: string[] = [],
): Promise<string[]> {
  return (await dig(port, ['+short', ...extra, name, type])).stdout.trim().split('\n').filter(Boolean).sort();
}

/** Waits until every dns-server of `servers` (by cluster) answers `want` for name and type, asking every 20 ms. */
export async function answeredEverywhere(
  servers: Readonly<Record<string, DnsProcess>>,
  name: string,
  type: string,
  want: string[],
  timeoutMs = 10_000,
): Promise<void> {
  await Promise.all(
    Object.entries(servers).map(([cluster, server]) =>
      eventually(
        async () => {
          const got = await shortAnswer(server.port, name, type);
          if (JSON.stringify(got) !== JSON.stringify([...want].sort()))
            throw new Error(`${cluster}: ${name} ${type}: got ${got.join(' ')}, want ${want.join(' ')}`);
        },
        timeoutMs,
        20,
      ),
    ),
  );
}
