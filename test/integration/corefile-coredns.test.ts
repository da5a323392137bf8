// The Corefile transform against the real CoreDNS of the test environment:
// kubeadm's default Corefile, patched by ensureForwardBlock, must start
// CoreDNS and make it forward the zone, while the cluster's own block keeps
// answering. CoreDNS must also refuse the Corefile the transform refuses to
// make (two blocks for one zone and port), which is why that is a Conflict.
//
// Only what one machine shared with other tests needs is changed in the
// kubeadm Corefile: every listener on 127.0.0.1 and an ephemeral port, the
// kubernetes plugin reaching cluster-a's API server by kubeconfig, and a 2 s
// reload interval so the reload check does not take 30 s.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import dnsPacket from 'dns-packet';
import { ensureForwardBlock, removeForwardBlock } from '../../operator/corefile/index.js';
import { testEnvInfo } from '../support/environment.js';
import { binPath, repoRoot } from '../support/paths.js';
import { clusterOf } from '../support/testenv.js';

const run = promisify(execFile);
const info = testEnvInfo();
const NAME = 'kuard.gateway.cluster-a.dev-team.clusters.xcc.test';

/** A stand-in for the dns-server: answers every A query with `address`, and counts what it was asked. */
class FakeDnsServer {
  readonly questions: string[] = [];
  private constructor(
    private readonly socket: dgram.Socket,
    readonly address: string,
  ) {}

  static async start(address: string): Promise<FakeDnsServer> {
    const socket = dgram.createSocket('udp4');
    const server = new FakeDnsServer(socket, address);
    socket.on('message', (msg, rinfo) => {
      const query = dnsPacket.decode(msg);
      const q = query.questions?.[0];
      if (!q) return;
      server.questions.push(q.name);
      const reply = dnsPacket.encode({
        type: 'response',
        id: query.id,
        flags: dnsPacket.AUTHORITATIVE_ANSWER,
        questions: [q],
        answers: q.type === 'A' ? [{ type: 'A', name: q.name, ttl: 30, data: server.address }] : [],
      });
      socket.send(reply, rinfo.port, rinfo.address);
    });
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return server;
  }

  get target(): string {
    return `127.0.0.1:${this.socket.address().port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}

/** A port free on 127.0.0.1 for TCP right now (CoreDNS binds UDP and TCP on it). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Ports {
  dns: number;
  health: number;
  ready: number;
  metrics: number;
}

/** kubeadm's Corefile, with only the changes this machine needs (see the top of the file). */
function kubeadmCorefileHere(ports: Ports, kubeconfig: string): string {
  const kubeadm = readFileSync(
    path.join(repoRoot(), 'operator', 'corefile', 'testdata', 'kubeadm.Corefile'),
    'utf8',
  );
  const adapted = kubeadm
    .replace('.:53 {\n', `.:${ports.dns} {\n    bind 127.0.0.1\n`)
    .replace('    health {', `    health 127.0.0.1:${ports.health} {`)
    .replace('    ready\n', `    ready 127.0.0.1:${ports.ready}\n`)
    .replace('       pods insecure\n', `       kubeconfig ${kubeconfig}\n       pods insecure\n`)
    .replace('    prometheus :9153\n', `    prometheus 127.0.0.1:${ports.metrics}\n`)
    .replace('    reload\n', '    reload 2s\n');
  expect(adapted.split('\n')).toHaveLength(kubeadm.split('\n').length + 2);
  return adapted;
}

class CoreDns {
  output = '';
  private readonly exited: Promise<number | null>;
  private constructor(private readonly child: ChildProcess) {
    child.stdout?.on('data', (d: Buffer) => (this.output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (this.output += d.toString()));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  static start(corefilePath: string): CoreDns {
    return new CoreDns(
      spawn(binPath('coredns'), ['-conf', corefilePath], { stdio: ['ignore', 'pipe', 'pipe'] }),
    );
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves with the exit code if CoreDNS exits within `ms`, with undefined if it keeps running. */
  async exitWithin(ms: number): Promise<number | null | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
    const code = await Promise.race([this.exited, timeout]);
    clearTimeout(timer);
    return code;
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    if ((await this.exitWithin(5_000)) === undefined) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }
}

async function dig(port: number, name: string, type = 'A'): Promise<string[]> {
  const { stdout } = await run('dig', [
    '@127.0.0.1',
    '-p',
    String(port),
    '+short',
    '+time=1',
    '+tries=1',
    name,
    type,
  ]);
  return stdout.trim().split('\n').filter(Boolean);
}

/** Retries dig until it gives `expected`, failing early with CoreDNS's output if CoreDNS exits. */
async function resolvesTo(coredns: CoreDns, port: number, name: string, expected: string[]): Promise<void> {
  const deadline = Date.now() + 20_000;
  let last: string[] | string = [];
  for (;;) {
    if (!coredns.running) throw new Error(`CoreDNS exited:\n${coredns.output}`);
    try {
      last = await dig(port, name);
      if (JSON.stringify(last) === JSON.stringify(expected)) return;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${name} gave ${JSON.stringify(last)}, not ${JSON.stringify(expected)}\n${coredns.output}`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('the patched Corefile in a real CoreDNS', () => {
  let dir = '';
  const started: CoreDns[] = [];
  const servers: FakeDnsServer[] = [];

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-corefile-'));
  });

  afterEach(async () => {
    await Promise.all(started.splice(0).map((c) => c.stop()));
    await Promise.all(servers.splice(0).map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  async function setUp(): Promise<{ ports: Ports; corefilePath: string; original: string }> {
    const ports = {
      dns: await freePort(),
      health: await freePort(),
      ready: await freePort(),
      metrics: await freePort(),
    };
    const original = kubeadmCorefileHere(ports, clusterOf(info, 'cluster-a').kubeconfig);
    return { ports, corefilePath: path.join(dir, 'Corefile'), original };
  }

  it("starts on kubeadm's patched Corefile, forwards the zone, and keeps serving cluster.local", async () => {
    const { ports, corefilePath, original } = await setUp();
    const dnsServer = await FakeDnsServer.start('127.0.10.1');
    servers.push(dnsServer);
    const patched = ensureForwardBlock(original, 'xcc.test', [dnsServer.target]);
    expect(patched.changed).toBe(true);
    // The block follows the root block's port and bind.
    expect(patched.corefile.slice(original.length)).toBe(
      '\n# capi-dns: forward the cross-cluster zone (managed by capi-dns-controller; do not edit)\n' +
        `xcc.test:${ports.dns} {\n    bind 127.0.0.1\n    forward . ${dnsServer.target}\n}\n`,
    );
    writeFileSync(corefilePath, patched.corefile);

    const coredns = CoreDns.start(corefilePath);
    started.push(coredns);
    await resolvesTo(coredns, ports.dns, NAME, ['127.0.10.1']);
    expect(dnsServer.questions).toContain(NAME);
    // Case is preserved on the way through, as a resolver would send it.
    await resolvesTo(coredns, ports.dns, NAME.toUpperCase(), ['127.0.10.1']);

    // The cluster's own block still answers from cluster-a's API server: the
    // "kubernetes" Service that every API server creates in "default".
    const [clusterIp] = await dig(ports.dns, 'kubernetes.default.svc.cluster.local');
    expect(clusterIp).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(coredns.output).toContain('CoreDNS-');
    expect(coredns.output).not.toMatch(/\[ERROR\]|\[FATAL\]/);
  });

  it("picks up a new target through the root block's reload, and a removed block", async () => {
    const { ports, corefilePath, original } = await setUp();
    const first = await FakeDnsServer.start('127.0.10.1');
    const second = await FakeDnsServer.start('127.0.10.2');
    servers.push(first, second);
    const patched = ensureForwardBlock(original, 'xcc.test', [first.target]).corefile;
    writeFileSync(corefilePath, patched);
    const coredns = CoreDns.start(corefilePath);
    started.push(coredns);
    await resolvesTo(coredns, ports.dns, NAME, ['127.0.10.1']);

    // What the operator does when the dns-server Service address changes.
    const moved = ensureForwardBlock(patched, 'xcc.test', [second.target]);
    expect(moved.changed).toBe(true);
    writeFileSync(corefilePath, moved.corefile);
    await resolvesTo(coredns, ports.dns, NAME, ['127.0.10.2']);

    // And when the cluster leaves the selection: the zone goes back to the
    // root block, whose upstream is unreachable here, so no answer at all.
    const removed = removeForwardBlock(moved.corefile, 'xcc.test');
    expect(removed.corefile).toBe(original);
    writeFileSync(corefilePath, removed.corefile);
    const deadline = Date.now() + 10_000;
    while ((await dig(ports.dns, NAME).catch(() => ['no answer yet'])).length > 0) {
      if (Date.now() > deadline)
        throw new Error(`still forwarded after the block was removed\n${coredns.output}`);
      await new Promise((r) => setTimeout(r, 300));
    }
    const [clusterIp] = await dig(ports.dns, 'kubernetes.default.svc.cluster.local');
    expect(clusterIp).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(coredns.running).toBe(true);
  });

  it('refuses to start with a second block for the zone and port, as the transform refuses to write it', async () => {
    const { ports, corefilePath, original } = await setUp();
    const patched = ensureForwardBlock(original, 'xcc.test', ['127.0.0.1:9']).corefile;
    const handWritten = `xcc.test:${ports.dns} {\n    bind 127.0.0.1\n    forward . 127.0.0.1:10\n}\n`;
    writeFileSync(corefilePath, `${patched}${handWritten}`);
    const coredns = CoreDns.start(corefilePath);
    started.push(coredns);
    const code = await coredns.exitWithin(15_000);
    expect(code).not.toBe(0);
    expect(code).not.toBeUndefined();
    expect(coredns.output).toMatch(/xcc\.test.*(already defined|cannot serve)/i);
    expect(() => ensureForwardBlock(`${original}${handWritten}`, 'xcc.test', ['127.0.0.1:9'])).toThrow(
      /already serves/,
    );
  });
});
