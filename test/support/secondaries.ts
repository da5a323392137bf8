// Secondaries of our dns-server, from Debian's packages: NSD, Knot and BIND,
// each a plain process on a loopback address of its own (so that the primary's
// access list and NOTIFY tell them apart), its configuration, zone and state
// in a temporary folder, taking one zone from the primary with a TSIG key,
// stopped (and its folder removed) by stop(), killed if the test process exits.
// The benchmarks and the demo use them too.
import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { answersOverUdp } from './dns.js';
import { stopChild } from './stop-child.js';

export type SecondaryKind = 'nsd' | 'knot' | 'bind';
export const SECONDARY_KINDS: readonly SecondaryKind[] = ['nsd', 'knot', 'bind'];

export interface TsigKeySpec {
  name: string;
  /** Base64, as tsig-keygen writes it. */
  secret: string;
}

export interface SecondarySpec {
  zone: string;
  primary: { address: string; port: number };
  key: TsigKeySpec;
  /** The loopback address the secondary listens on and transfers from. */
  address: string;
  /** Its port (chosen before the primary starts, which NOTIFYs it); a free one when unset. */
  port?: number;
}

export interface Secondary {
  kind: SecondaryKind;
  address: string;
  port: number;
  dir: string;
  child: ChildProcess;
  /** The serial of the zone it serves now, undefined while it serves none. */
  serial(): Promise<number | undefined>;
  logs(): string;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** The key as tsig-keygen writes it (BIND's, and our dns-server's --tsig-key-file). */
export function keyFileText(key: TsigKeySpec): string {
  return `key "${key.name}" {\n\talgorithm hmac-sha256;\n\tsecret "${key.secret}";\n};\n`;
}

/** A fresh random key (what tsig-keygen makes: 32 random octets). */
export function newKey(name: string): TsigKeySpec {
  const secret = Buffer.alloc(32);
  for (let i = 0; i < 32; i++) secret[i] = Math.floor(Math.random() * 256);
  return { name, secret: secret.toString('base64') };
}

/** A port free on `address` for both UDP and TCP right now. */
export async function freePortOn(address: string): Promise<number> {
  for (;;) {
    const tcp = net.createServer();
    const port = await new Promise<number>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(0, address, () => resolve((tcp.address() as net.AddressInfo).port));
    });
    const udp = dgram.createSocket('udp4');
    const ok = await new Promise<boolean>((resolve) => {
      udp.once('error', () => resolve(false));
      udp.bind(port, address, () => resolve(true));
    });
    await new Promise<void>((resolve) => tcp.close(() => resolve()));
    udp.close();
    if (ok) return port;
  }
}

/** The SOA serial `address`:`port` answers for `zone` over UDP; undefined for no answer or no SOA. */
export function soaSerial(
  address: string,
  port: number,
  zone: string,
  timeoutMs = 500,
): Promise<number | undefined> {
  const qname = Buffer.concat([
    ...zone.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])),
    Buffer.from([0]),
  ]);
  const id = Math.floor(Math.random() * 0xffff);
  const header = Buffer.from([id >> 8, id & 0xff, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
  const msg = Buffer.concat([header, qname, Buffer.from([0, 6, 0, 1])]);
  return new Promise((resolve) => {
    const sock = dgram.createSocket('udp4');
    const done = (serial: number | undefined) => {
      clearTimeout(timer);
      sock.close();
      resolve(serial);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    sock.on('error', () => done(undefined));
    sock.on('message', (res) => {
      if (res.readUInt16BE(0) !== id) return;
      // NOERROR with an answer: the SOA's serial is 20 octets before the end of its RDATA.
      if ((res[3]! & 0x0f) !== 0 || res.readUInt16BE(6) < 1) return done(undefined);
      let at = 12 + qname.length + 4;
      at = skipName(res, at);
      const rdlength = res.readUInt16BE(at + 8);
      done(res.readUInt32BE(at + 10 + rdlength - 20));
    });
    sock.send(msg, port, address);
  });
}

function skipName(msg: Buffer, at: number): number {
  for (;;) {
    const len = msg[at]!;
    if (len === 0) return at + 1;
    if ((len & 0xc0) === 0xc0) return at + 2;
    at += 1 + len;
  }
}

export function startSecondary(kind: SecondaryKind, spec: SecondarySpec): Promise<Secondary> {
  return { nsd: startNsdSecondary, knot: startKnotSecondary, bind: startBindSecondary }[kind](spec);
}

async function launch(
  kind: SecondaryKind,
  spec: SecondarySpec,
  write: (dir: string, port: number) => { command: string; args: string[]; logFile?: string },
): Promise<Secondary> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `capi-dns-${kind}-secondary-`));
  const port = spec.port ?? (await freePortOn(spec.address));
  const { command, args, logFile } = write(dir, port);
  const child = spawn(command, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const logs = () => output + (logFile && existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  const stop = async () => {
    await stopChild(child, 5000);
    rmSync(dir, { recursive: true, force: true });
  };
  const secondary: Secondary = {
    kind,
    address: spec.address,
    port,
    dir,
    child,
    serial: () => soaSerial(spec.address, port, spec.zone),
    logs,
    stop,
  };
  try {
    // Up once it answers on its port at all (REFUSED or SERVFAIL before it has the zone).
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${kind} exited (${child.exitCode}):\n${logs()}`);
      if (await answersOverUdp(spec.address, port, spec.zone, 200)) break;
      if (Date.now() > deadline)
        throw new Error(`${kind} does not answer on ${spec.address}:${port}:\n${logs()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return secondary;
}

export function startNsdSecondary(spec: SecondarySpec): Promise<Secondary> {
  return launch('nsd', spec, (dir, port) => {
    const { primary, key } = spec;
    writeFileSync(
      path.join(dir, 'nsd.conf'),
      `server:
  ip-address: ${spec.address}@${port}
  server-count: 1
  zonesdir: "${dir}"
  database: ""
  pidfile: "${dir}/nsd.pid"
  xfrdfile: "${dir}/xfrd.state"
  xfrdir: "${dir}"
  zonelistfile: "${dir}/zone.list"
  logfile: "${dir}/nsd.log"
  username: ""
  chroot: ""
  verbosity: 2
  rrl-ratelimit: 0
  rrl-whitelist-ratelimit: 0
remote-control:
  control-enable: no
key:
  name: "${key.name}"
  algorithm: hmac-sha256
  secret: "${key.secret}"
zone:
  name: ${spec.zone}
  zonefile: "${spec.zone}.zone"
  allow-notify: ${primary.address} ${key.name}
  request-xfr: ${primary.address}@${primary.port} ${key.name}
  outgoing-interface: ${spec.address}
`,
    );
    return {
      command: '/usr/sbin/nsd',
      args: ['-d', '-c', path.join(dir, 'nsd.conf')],
      logFile: path.join(dir, 'nsd.log'),
    };
  });
}

export function startKnotSecondary(spec: SecondarySpec): Promise<Secondary> {
  return launch('knot', spec, (dir, port) => {
    const { primary, key } = spec;
    writeFileSync(
      path.join(dir, 'knot.conf'),
      `server:
    rundir: "${dir}"
    listen: ${spec.address}@${port}
log:
  - target: stderr
    any: info
key:
  - id: ${key.name}
    algorithm: hmac-sha256
    secret: ${key.secret}
remote:
  - id: primary
    address: ${primary.address}@${primary.port}
    key: ${key.name}
    via: ${spec.address}
acl:
  - id: notify-from-primary
    address: ${primary.address}
    key: ${key.name}
    action: notify
database:
    storage: "${dir}"
template:
  - id: default
    storage: "${dir}"
    zonefile-sync: -1
    zonefile-load: none
    journal-content: changes
zone:
  - domain: ${spec.zone}
    master: primary
    acl: notify-from-primary
`,
    );
    return { command: '/usr/sbin/knotd', args: ['-c', path.join(dir, 'knot.conf')] };
  });
}

/**
 * BIND listens only on addresses an interface holds (it scans them), unlike NSD and Knot, which bind
 * any address of 127.0.0.0/8: the address is added to lo for its life, and removed by stop().
 */
export async function startBindSecondary(spec: SecondarySpec): Promise<Secondary> {
  const added = await addLoopbackAddress(spec.address);
  let secondary: Secondary;
  try {
    secondary = await launchBind(spec);
  } catch (err) {
    if (added) await removeLoopbackAddress(spec.address);
    throw err;
  }
  const stop = secondary.stop;
  return {
    ...secondary,
    stop: async () => {
      await stop();
      if (added) await removeLoopbackAddress(spec.address);
    },
  };
}

function ip(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', (err) => resolve({ code: -1, output: String(err) }));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

/** Adds `address`/32 to lo; false if it was there already (then it is not ours to remove). */
async function addLoopbackAddress(address: string): Promise<boolean> {
  const shown = await ip(['-4', 'addr', 'show', 'dev', 'lo']);
  if (shown.output.includes(`inet ${address}/`)) return false;
  const r = await ip(['addr', 'add', `${address}/32`, 'dev', 'lo']);
  if (r.code !== 0) throw new Error(`ip addr add ${address}/32 dev lo: ${r.output}`);
  return true;
}

async function removeLoopbackAddress(address: string): Promise<void> {
  await ip(['addr', 'del', `${address}/32`, 'dev', 'lo']);
}

function launchBind(spec: SecondarySpec): Promise<Secondary> {
  return launch('bind', spec, (dir, port) => {
    const { primary, key } = spec;
    writeFileSync(
      path.join(dir, 'named.conf'),
      `${keyFileText(key)}
options {
  directory "${dir}";
  pid-file "${dir}/named.pid";
  listen-on port ${port} { ${spec.address}; };
  listen-on-v6 { none; };
  recursion no;
  notify no;
  transfer-source ${spec.address};
  allow-query { any; };
  dnssec-validation no;
};
controls { };
zone "${spec.zone}" {
  type secondary;
  file "${dir}/${spec.zone}.db";
  primaries port ${primary.port} { ${primary.address} key "${key.name}"; };
  allow-notify { ${primary.address}; };
};
`,
    );
    return { command: '/usr/sbin/named', args: ['-g', '-c', path.join(dir, 'named.conf')] };
  });
}
