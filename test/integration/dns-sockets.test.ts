// The dns-server as a process on real sockets, asked with dig (and a raw TCP
// client for pipelining): answers, truncation, TCP framing and idle timeout,
// the records file's reloads, health and metrics, --help.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import dnsPacket from 'dns-packet';
import { dig, startDnsServer, type DnsProcess } from '../support/dns.js';
import { eventually } from '../support/kube.js';
import { repoRoot } from '../support/paths.js';
import { sumMetric } from '../support/metrics.js';

const W = 'gateway.cluster-a.dev-team.clusters.xcc.test';

function recordsYaml(extra = ''): string {
  return `apiVersion: connectivity.tanzu.vmware.com/v1alpha1
kind: DNSRecordSet
metadata: {name: dev-team.dev-team-gateway-dns, namespace: capi-dns}
spec:
  records:
  - {name: "*.${W}", type: A, ttl: 30, values: ["10.0.0.5", "10.0.0.6"]}
  - {name: "a.xcc.test", type: A, values: ["10.0.0.1"]}
  - {name: "www.xcc.test", type: CNAME, values: ["a.xcc.test"]}
  - {name: "_http._tcp.svc.xcc.test", type: SRV, values: ["0 5 8080 a.xcc.test"]}
  - {name: "_http._tcp.svc.xcc.test", type: SRV, values: ["bad srv"]}
  - {name: "big.xcc.test", type: A, values: [${Array.from({ length: 40 }, (_, i) => `"10.1.0.${i}"`).join(', ')}]}
${extra}---
apiVersion: connectivity.tanzu.vmware.com/v1alpha1
kind: DNSRecordSet
metadata: {name: second}
spec:
  records:
  - {name: "a.xcc.test", type: A, values: ["10.0.0.1", "10.0.0.2"]}
`;
}

/** A dns-server serving recordsYaml() from a records file in a new temporary folder, once ready. */
async function startFromRecordsFile(
  prefix: string,
  args: string[],
): Promise<{ server: DnsProcess; dir: string; file: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  const file = path.join(dir, 'records.yaml');
  writeFileSync(file, recordsYaml());
  const server = await startDnsServer(['--zone', 'xcc.test', '--records-file', file, ...args], {
    health: true,
  });
  await eventually(async () => {
    const res = await fetch(`http://127.0.0.1:${server.healthPort}/readyz`);
    if (res.status !== 200) throw new Error(`readyz ${res.status}`);
  });
  return { server, dir, file };
}

describe('dns-server on sockets', () => {
  let server: DnsProcess;
  let file: string;

  let dir: string;

  beforeAll(async () => {
    ({ server, dir, file } = await startFromRecordsFile('capi-dns-sockets-', [
      '--tcp-idle-timeout',
      '1s',
      '--file-poll',
      '100ms',
    ]));
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers authoritatively, echoing the case of the question, merging record sets', async () => {
    const r = await dig(server.port, ['+norec', 'A.XCC.Test', 'A']);
    expect(r.status).toBe('NOERROR');
    expect(r.flags).toEqual(['qr', 'aa']);
    expect(r.answer).toEqual(['A.XCC.Test. 30 IN A 10.0.0.1', 'A.XCC.Test. 30 IN A 10.0.0.2']);
  });

  it('synthesises wildcard answers and follows CNAMEs inside the zone', async () => {
    expect((await dig(server.port, [`kuard.${W}`, 'A'])).answer).toEqual([
      `kuard.${W}. 30 IN A 10.0.0.5`,
      `kuard.${W}. 30 IN A 10.0.0.6`,
    ]);
    expect((await dig(server.port, ['www.xcc.test', 'A'])).answer).toEqual([
      'www.xcc.test. 30 IN CNAME a.xcc.test.',
      'a.xcc.test. 30 IN A 10.0.0.1',
      'a.xcc.test. 30 IN A 10.0.0.2',
    ]);
  });

  it('serves valid SRV values and skips (and logs) the bad one', async () => {
    expect((await dig(server.port, ['_http._tcp.svc.xcc.test', 'SRV'])).answer).toEqual([
      '_http._tcp.svc.xcc.test. 30 IN SRV 0 5 8080 a.xcc.test.',
    ]);
    const skipped = server
      .logs()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => entry['msg'] === 'record skipped');
    expect(skipped).toEqual([
      expect.objectContaining({ reason: expect.stringContaining('SRV value "bad srv"') }),
    ]);
  });

  it('answers NXDOMAIN and NODATA with the SOA, REFUSED outside the zone', async () => {
    const nx = await dig(server.port, ['nope.xcc.test', 'A']);
    expect(nx.status).toBe('NXDOMAIN');
    expect(nx.authority).toHaveLength(1);
    expect(nx.authority[0]).toMatch(
      /^xcc\.test\. 30 IN SOA ns1\.xcc\.test\. hostmaster\.xcc\.test\. \d+ 3600 600 86400 30$/,
    );
    const nodata = await dig(server.port, [W, 'A']);
    expect(nodata.status).toBe('NOERROR');
    expect(nodata.answer).toEqual([]);
    expect(nodata.authority).toHaveLength(1);
    const refused = await dig(server.port, ['example.com', 'A']);
    expect(refused.status).toBe('REFUSED');
    expect(refused.flags).not.toContain('aa');
  });

  it('sets TC when the answer does not fit in 512 octets, and answers in full over TCP', async () => {
    const udp = await dig(server.port, ['+noedns', '+ignore', 'big.xcc.test', 'A']);
    expect(udp.flags).toContain('tc');
    expect(udp.answer).toEqual([]);
    const edns = await dig(server.port, ['+bufsize=1232', 'big.xcc.test', 'A']);
    expect(edns.flags).not.toContain('tc');
    expect(edns.answer).toHaveLength(40);
    const tcp = await dig(server.port, ['+tcp', '+noedns', 'big.xcc.test', 'A']);
    expect(tcp.answer).toHaveLength(40);
  });

  it('answers several queries on one TCP connection and closes it when idle', async () => {
    const socket = net.connect(server.port, '127.0.0.1');
    const frames: Buffer[] = [];
    let buffered = Buffer.alloc(0);
    const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
    socket.on('data', (d: Buffer) => {
      buffered = Buffer.concat([buffered, d]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        frames.push(buffered.subarray(2, 2 + buffered.readUInt16BE(0)));
        buffered = buffered.subarray(2 + buffered.readUInt16BE(0));
      }
    });
    const queries = ['a.xcc.test', 'nope.xcc.test', `x.${W}`].map((name, i) =>
      dnsPacket.streamEncode({ type: 'query', id: i + 1, questions: [{ name, type: 'A', class: 'IN' }] }),
    );
    const began = Date.now();
    socket.write(Buffer.concat(queries)); // all three in one segment
    const end = await closed;
    const answers = frames.map((f) => dnsPacket.decode(f));
    expect(answers.map((a) => [a.id, (a as { rcode?: string }).rcode, a.answers?.length])).toEqual([
      [1, 'NOERROR', 2],
      [2, 'NXDOMAIN', 0],
      [3, 'NOERROR', 2],
    ]);
    expect(end - began).toBeGreaterThanOrEqual(900);
    expect(end - began).toBeLessThan(5000);
  });

  it('reloads the records file when it changes, keeps the last records when it breaks', async () => {
    const soaSerial = async () =>
      Number((await dig(server.port, ['xcc.test', 'SOA', '+short'])).stdout.trim().split(/\s+/)[2]);
    const before = await soaSerial();
    writeFileSync(file, recordsYaml('  - {name: "new.xcc.test", type: TXT, values: ["fresh"]}\n'));
    await eventually(async () => {
      expect((await dig(server.port, ['new.xcc.test', 'TXT'])).answer).toEqual([
        'new.xcc.test. 30 IN TXT "fresh"',
      ]);
    }, 5000);
    expect(await soaSerial()).toBeGreaterThan(before);
    writeFileSync(file, 'spec: [this is: not: yaml\n');
    await eventually(async () => expect(server.logs()).toMatch(/records file is broken/), 5000);
    expect((await dig(server.port, ['new.xcc.test', 'TXT'])).answer).toEqual([
      'new.xcc.test. 30 IN TXT "fresh"',
    ]);
    const metrics = await (await fetch(`http://127.0.0.1:${server.healthPort}/metrics`)).text();
    expect(
      sumMetric(metrics, 'capi_dns_server_dns_requests_total', { zone: 'xcc.test.', type: 'TXT' }),
    ).toBeGreaterThan(0);
    expect(sumMetric(metrics, 'capi_dns_server_dns_responses_total', { rcode: 'NXDOMAIN' })).toBeGreaterThan(
      0,
    );
    expect(sumMetric(metrics, 'capi_dns_server_dns_request_duration_seconds_count')).toBeGreaterThan(0);
    expect(metrics).toMatch(/capi_dns_server_records \d+/);
    expect(metrics).toMatch(/capi_dns_server_last_sync_age_seconds\{source="file:.*"\} [\d.]+/);
    expect(metrics).toMatch(/capi_dns_server_source_errors_total [1-9]/);
    // prom-client's default process and Node collectors, next to ours.
    expect(metrics).toMatch(/^process_resident_memory_bytes [1-9]\d*$/m);
    expect(metrics).toMatch(/^nodejs_eventloop_lag_seconds [\d.e-]+$/m);
    expect(metrics).toMatch(/^process_open_fds [1-9]\d*$/m);
    expect(metrics).toMatch(/^nodejs_active_handles_total \d+$/m);
    expect(await (await fetch(`http://127.0.0.1:${server.healthPort}/healthz`)).text()).toBe('ok\n');
  });

  it('lists every flag in --help', () => {
    const help = execFileSync(
      process.execPath,
      [path.join(repoRoot(), 'dist', 'dns-server', 'main.js'), '--help'],
      {
        encoding: 'utf8',
      },
    );
    for (const flag of [
      '--listen',
      '--zone',
      '--records-file',
      '--kubeconfig',
      '--namespace',
      '--health-listen',
      '--soa-minimum',
      '--max-udp-size',
      '--tcp-idle-timeout',
      '--log-queries',
    ])
      expect(help).toContain(flag);
  });
});

describe('dns-server --workers 2', () => {
  let server: DnsProcess;
  let dir: string;

  beforeAll(async () => {
    ({ server, dir } = await startFromRecordsFile('capi-dns-workers-', ['--workers', '2']));
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const answering = (pid: number) =>
    readdirSync(`/proc/${pid}/task`).flatMap((t) =>
      readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
    );
  const answersOverBoth = async () => {
    for (let i = 0; i < 4; i++) expect((await dig(server.port, ['a.xcc.test', 'A'])).answer).toHaveLength(2); // a new source port each
    expect((await dig(server.port, ['+tcp', 'a.xcc.test', 'A'])).answer).toHaveLength(2);
  };

  it('answers over UDP and TCP from two answering processes', async () => {
    expect(answering(server.child.pid!)).toHaveLength(2);
    await answersOverBoth();
  });

  it('replaces an answering process that dies, on the same sockets', async () => {
    const [victim] = answering(server.child.pid!);
    process.kill(victim!, 'SIGKILL');
    await eventually(async () => {
      const now = answering(server.child.pid!);
      expect(now).toHaveLength(2);
      expect(now).not.toContain(victim);
    }, 10_000);
    await answersOverBoth();
    // Answering processes report their counts once a second, so the sum on /metrics lags by up to that.
    await eventually(async () => {
      const metrics = await (await fetch(`http://127.0.0.1:${server.healthPort}/metrics`)).text();
      expect(sumMetric(metrics, 'capi_dns_server_dns_requests_total', { proto: 'udp' })).toBeGreaterThan(0);
    }, 5_000);
  });
});
