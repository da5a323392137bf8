// Response rate limiting (dns-server/serve/rate-limit.ts) tried as a new user
// would, through both UDP paths: a flood of queries for one name from 128
// client prefixes (127.77.<n>.x: loopback addresses, bound by the test, which
// Linux routes to lo without configuration), while legitimate clients ask
// with dig. A client in another prefix is answered over UDP at once; one
// inside a flooded prefix is answered too (a slipped, truncated response sends
// it to TCP, which is never limited). Full answers to a prefix stay within
// the rate, and the server's memory stays where it was: the table is fixed.
import { execFile } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import dnsPacket from 'dns-packet';
import { parseDig, startDnsServer, type DnsProcess } from '../support/dns.js';
import { eventually } from '../support/kube.js';
import { sumMetric } from '../support/metrics.js';

const run = promisify(execFile);
const RATE = 20;
const PREFIXES = 128;
const FLOOD_MS = 2_000;
const RECORDS = `apiVersion: connectivity.tanzu.vmware.com/v1alpha1
kind: DNSRecordSet
metadata: {name: flood}
spec:
  records:
  - {name: a.xcc.test, type: A, values: ["10.0.0.1"]}
`;

const rssKiB = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

/** dig from a source address of our choosing, retrying (UDP then TCP on TC) as a stub resolver would. */
async function digFrom(source: string, port: number, tries = 1) {
  const { stdout } = await run('dig', [
    '-b',
    source,
    '@127.0.0.1',
    '-p',
    String(port),
    `+tries=${tries}`,
    '+time=1',
    'a.xcc.test',
    'A',
  ]);
  return parseDig(stdout);
}

describe.each(['native', 'dgram'] as const)('response rate limiting through %s under a flood', (udpIo) => {
  let dir: string;
  let server: DnsProcess;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-rrl-'));
    writeFileSync(path.join(dir, 'records.yaml'), RECORDS);
    server = await startDnsServer(
      [
        '--zone',
        'xcc.test',
        '--records-file',
        path.join(dir, 'records.yaml'),
        '--udp-io',
        udpIo,
        '--rrl-responses-per-second',
        String(RATE),
        '--rrl-table-size',
        '4096',
      ],
      { health: true },
    );
    await eventually(async () => {
      const res = await fetch(`http://127.0.0.1:${server.healthPort}/readyz`);
      if (res.status !== 200) throw new Error(`readyz ${res.status}`);
    });
  });
  afterAll(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('limits each flooding prefix to the rate, answers legitimate clients, and keeps its memory', async () => {
    const before = rssKiB(server.child.pid!);
    const socks = await Promise.all(
      Array.from({ length: PREFIXES }, async (_, i) => {
        const sock = dgram.createSocket('udp4');
        const got = { full: 0, truncated: 0 };
        sock.on('message', (m) => (m[2]! & 0x02 ? got.truncated++ : got.full++));
        await new Promise<void>((resolve) => sock.bind(0, `127.77.${i}.${1 + (i % 250)}`, resolve));
        return { sock, got };
      }),
    );
    const q = dnsPacket.encode({
      type: 'query',
      id: 1,
      questions: [{ name: 'a.xcc.test', type: 'A', class: 'IN' }],
    });
    let sent = 0;
    const started = Date.now();
    const flooding = (async () => {
      while (Date.now() - started < FLOOD_MS) {
        for (const { sock } of socks) for (let k = 0; k < 4; k++) sock.send(q, server.port, '127.0.0.1');
        sent += socks.length * 4;
        await new Promise((r) => setImmediate(r));
      }
    })();
    // During the flood: a client of another prefix, and one inside a flooded prefix.
    await new Promise((r) => setTimeout(r, 500));
    const outside = await digFrom('127.78.0.1', server.port);
    const inside = await digFrom('127.77.5.200', server.port, 3);
    await flooding;
    await new Promise((r) => setTimeout(r, 300));
    for (const { sock } of socks) sock.close();
    const seconds = (Date.now() - started) / 1000;

    expect(outside.status).toBe('NOERROR');
    expect(outside.answer).toEqual(['a.xcc.test. 30 IN A 10.0.0.1']);
    expect(inside.status).toBe('NOERROR');
    expect(inside.answer).toEqual(['a.xcc.test. 30 IN A 10.0.0.1']);

    const full = socks.map((s) => s.got.full);
    const truncated = socks.reduce((n, s) => n + s.got.truncated, 0);
    // A prefix gets at most its burst (one second's worth) and the rate for the time: nothing more.
    expect(Math.max(...full)).toBeLessThanOrEqual(Math.ceil(RATE * (1 + seconds)) + 1);
    expect(truncated).toBeGreaterThan(0);
    const metrics = await (await fetch(`http://127.0.0.1:${server.healthPort}/metrics`)).text();
    const dropped = sumMetric(metrics, 'capi_dns_server_rate_limited_responses_total', { action: 'dropped' });
    const slipped = sumMetric(metrics, 'capi_dns_server_rate_limited_responses_total', { action: 'slipped' });
    expect(dropped).toBeGreaterThan(0);
    expect(slipped).toBeGreaterThan(0);
    const after = rssKiB(server.child.pid!);
    process.stderr.write(
      `rrl ${udpIo}: ${sent} queries from ${PREFIXES} prefixes in ${seconds.toFixed(1)} s; full answers per prefix max ${Math.max(...full)} (rate ${RATE}/s), ${truncated} truncated received; server dropped ${dropped}, slipped ${slipped}; RSS ${before} → ${after} KiB\n`,
    );
    expect(after - before).toBeLessThan(32 * 1024);
  }, 30_000);
});
