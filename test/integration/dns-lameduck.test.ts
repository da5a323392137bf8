// The dns-server's lame-duck period on a real process: after SIGTERM it keeps
// answering over UDP and TCP while /readyz says 503, so that the endpoint's
// removal can reach every kube-proxy before the sockets close; then it exits
// 0. A second signal ends it at once.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dig, startDnsServer, type DnsProcess } from '../support/dns.js';
import { eventually } from '../support/kube.js';

const RECORDS = `apiVersion: connectivity.tanzu.vmware.com/v1alpha1
kind: DNSRecordSet
metadata: {name: lameduck}
spec:
  records:
  - {name: "a.xcc.test", type: A, values: ["10.0.0.1"]}
`;

describe('dns-server lame duck', () => {
  let dir: string;
  const servers: DnsProcess[] = [];

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-lameduck-'));
    writeFileSync(path.join(dir, 'records.yaml'), RECORDS);
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(lameduck: string): Promise<DnsProcess> {
    const server = await startDnsServer(
      ['--zone', 'xcc.test', '--records-file', path.join(dir, 'records.yaml'), '--lameduck', lameduck],
      { health: true },
    );
    servers.push(server);
    await eventually(async () => {
      const res = await fetch(`http://127.0.0.1:${server.healthPort}/readyz`);
      if (res.status !== 200) throw new Error(`readyz ${res.status}`);
    });
    return server;
  }

  const exited = (server: DnsProcess) =>
    new Promise<number | null>((resolve) => {
      if (server.child.exitCode !== null) return resolve(server.child.exitCode);
      server.child.once('exit', (code) => resolve(code));
    });

  it('answers and reports unready for the period after SIGTERM, then exits 0', async () => {
    // The queries stop at half the period, not after a count: on a loaded
    // machine each dig is a process start, and a fixed count of them has
    // outlasted a 2 s period and met the closed socket.
    const server = await start('4s');
    const began = Date.now();
    const exit = exited(server);
    server.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 50));
    const ready = await fetch(`http://127.0.0.1:${server.healthPort}/readyz`);
    expect(ready.status).toBe(503);
    let rounds = 0;
    while (Date.now() - began < 2000) {
      expect((await dig(server.port, ['+short', 'a.xcc.test', 'A'])).stdout.trim()).toBe('10.0.0.1');
      expect((await dig(server.port, ['+short', '+tcp', 'a.xcc.test', 'A'])).stdout.trim()).toBe('10.0.0.1');
      rounds++;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(rounds).toBeGreaterThanOrEqual(2);
    expect(await exit).toBe(0);
    const took = Date.now() - began;
    expect(took).toBeGreaterThanOrEqual(3900);
    expect(took).toBeLessThan(8000);
  });

  it('exits at once on a second signal', async () => {
    const server = await start('30s');
    const exit = exited(server);
    server.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    expect((await dig(server.port, ['+short', 'a.xcc.test', 'A'])).stdout.trim()).toBe('10.0.0.1');
    const began = Date.now();
    server.child.kill('SIGTERM');
    expect(await exit).not.toBeNull();
    expect(Date.now() - began).toBeLessThan(1000);
  });
});
