// What one TCP client can hold of the dns-server is bounded (RFC 7766
// sections 6 to 10), on real sockets against the real process: a burst of
// queries whose answers are never read, a sender that drips one octet at a
// time, too many connections from one address or in all, and too many
// queries or too long on one connection; at the cap, new clients are answered
// and only the longest-idle connections shed. Ordinary pipelining still works and
// the server listens on IPv6 as well as IPv4 for ":PORT".
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import dnsPacket from 'dns-packet';
import { dig, startDnsServer, type DnsProcess } from '../support/dns.js';
import { eventually } from '../support/kube.js';
import { sumMetric } from '../support/metrics.js';

/** 2,000 A records: an answer of about 32 KB over TCP. */
const BIG = 'big.xcc.test';
const RECORDS = `apiVersion: connectivity.tanzu.vmware.com/v1alpha1
kind: DNSRecordSet
metadata: {name: limits}
spec:
  records:
  - {name: "a.xcc.test", type: A, values: ["10.0.0.1"]}
  - {name: "${BIG}", type: A, values: [${Array.from({ length: 2000 }, (_, i) => `"10.2.${i >> 8}.${i & 255}"`).join(', ')}]}
`;

function framedQuery(name: string, id: number): Buffer {
  const q = dnsPacket.encode({ type: 'query', id, questions: [{ type: 'A', name }] });
  const framed = Buffer.alloc(2 + q.length);
  framed.writeUInt16BE(q.length, 0);
  q.copy(framed, 2);
  return framed;
}

async function start(args: string[]): Promise<{ server: DnsProcess; dir: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-tcp-limits-'));
  const file = path.join(dir, 'records.yaml');
  writeFileSync(file, RECORDS);
  const server = await startDnsServer(['--zone', 'xcc.test', '--records-file', file, ...args], {
    health: true,
  });
  await eventually(async () => {
    const res = await fetch(`http://127.0.0.1:${server.healthPort}/readyz`);
    if (res.status !== 200) throw new Error(`readyz ${res.status}`);
  });
  return { server, dir };
}

/** The sum of a metric's series whose labels include `labels`. */
async function metric(
  server: DnsProcess,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  return sumMetric(await (await fetch(`http://127.0.0.1:${server.healthPort}/metrics`)).text(), name, labels);
}

async function closedFor(server: DnsProcess, reason: string): Promise<number> {
  return metric(server, 'capi_dns_server_tcp_connections_closed_total', { reason });
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) / 1024;
}

function connect(port: number, localAddress = '127.0.0.1', host = '127.0.0.1'): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ port, host, localAddress }, () => resolve(s));
    s.once('error', reject);
  });
}

/** How the server ended the connection: 'end' (FIN, graceful), 'reset', or still 'open' after ms. */
function ending(socket: net.Socket, ms: number): Promise<'end' | 'reset' | 'open'> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('open'), ms);
    socket.once('end', () => (clearTimeout(timer), resolve('end')));
    socket.once('error', () => (clearTimeout(timer), resolve('reset')));
    socket.once('close', () => (clearTimeout(timer), resolve('end')));
    socket.resume();
  });
}

/** Reads framed answers until `count` have arrived or the connection ends; resolves with their ids. */
function answers(socket: net.Socket, count: number, ms = 5000): Promise<number[]> {
  return new Promise((resolve) => {
    const ids: number[] = [];
    let pending = Buffer.alloc(0);
    const done = () => (clearTimeout(timer), socket.removeAllListeners('data'), resolve(ids));
    const timer = setTimeout(done, ms);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
        ids.push(pending.readUInt16BE(2));
        pending = pending.subarray(2 + pending.readUInt16BE(0));
      }
      if (ids.length >= count) done();
    });
    socket.once('close', done);
  });
}

describe('dns-server TCP limits', () => {
  let server: DnsProcess;
  let dir: string;
  const sockets: net.Socket[] = [];
  const open = async (localAddress?: string) => {
    const s = await connect(server.port, localAddress);
    sockets.push(s);
    return s;
  };

  beforeAll(async () => {
    ({ server, dir } = await start([
      '--listen',
      ':0',
      '--tcp-idle-timeout',
      '3s',
      '--tcp-message-timeout',
      '1s',
      '--tcp-max-connections-per-client',
      '3',
      '--tcp-max-connections',
      '6',
    ]));
  });
  afterEach(() => {
    for (const s of sockets.splice(0)) s.destroy();
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stops reading a connection whose answers are not read: unsent output and memory stay bounded', async () => {
    await eventually(async () => expect(await metric(server, 'capi_dns_server_tcp_connections')).toBe(0));
    const before = rssMb(server.child.pid!);
    const answered = await metric(server, 'capi_dns_server_dns_requests_total', { proto: 'tcp' });
    // 64 KB of queries, each asking for a 32 KB answer, from each of three connections; none reads.
    const burst = Buffer.concat(Array.from({ length: 2200 }, (_, i) => framedQuery(BIG, i)));
    const clients = await Promise.all(['127.0.0.1', '127.0.0.2', '127.0.0.3'].map((a) => open(a)));
    for (const c of clients) {
      c.pause();
      c.write(burst);
    }
    await new Promise((r) => setTimeout(r, 1500));
    const buffered = await metric(server, 'capi_dns_server_tcp_buffered_bytes');
    const nowAnswered =
      (await metric(server, 'capi_dns_server_dns_requests_total', { proto: 'tcp' })) - answered;
    const grown = rssMb(server.child.pid!) - before;
    process.stderr.write(
      `burst of 3 x 2,200 queries never read: ${nowAnswered} answered, ${buffered} octets unsent, RSS +${grown.toFixed(1)} MB\n`,
    );
    // Each connection: under the 16 KiB high-water mark plus one 32 KB answer.
    expect(buffered).toBeLessThan(3 * (16 * 1024 + 40 * 1024));
    // The kernel's socket buffers take a few answers; nothing near the 6,600 asked for.
    expect(nowAnswered).toBeLessThan(600);
    expect(grown).toBeLessThan(40);
  });

  it('closes a stalled writer after the idle timeout', async () => {
    const before = await closedFor(server, 'write_stalled');
    const c = await open('127.0.0.6');
    c.pause();
    c.write(Buffer.concat(Array.from({ length: 200 }, (_, i) => framedQuery(BIG, i))));
    await eventually(async () => expect(await closedFor(server, 'write_stalled')).toBe(before + 1), 8000);
  });

  it('resets a sender that drips one octet at a time, at the message deadline, not the idle timeout', async () => {
    const c = await open('127.0.0.7');
    const query = framedQuery('a.xcc.test', 1);
    let sent = 0;
    const drip = setInterval(() => sent < query.length && c.write(query.subarray(sent, ++sent)), 300);
    const began = Date.now();
    const how = await ending(c, 6000);
    clearInterval(drip);
    expect(how).not.toBe('open');
    // 1 s deadline, checked four times a second; well before the 3 s idle timeout.
    expect(Date.now() - began).toBeLessThan(2500);
    expect(await closedFor(server, 'message_timeout')).toBeGreaterThanOrEqual(1);
  });

  it('measures idleness from the last query, not from any octet', async () => {
    const c = await open('127.0.0.8');
    c.write(framedQuery('a.xcc.test', 7));
    expect(await answers(c, 1)).toEqual([7]);
    const began = Date.now();
    expect(await ending(c, 6000)).toBe('end');
    expect(Date.now() - began).toBeGreaterThan(2500);
    expect(Date.now() - began).toBeLessThan(4500);
  });

  it('refuses a fourth connection from one address, not from another', async () => {
    const mine = await Promise.all([1, 2, 3].map(() => open('127.0.0.4')));
    const fourth = await open('127.0.0.4');
    expect(await ending(fourth, 2000)).not.toBe('open');
    const other = await open('127.0.0.5');
    other.write(framedQuery('a.xcc.test', 9));
    expect(await answers(other, 1)).toEqual([9]);
    for (const c of mine) expect(c.destroyed).toBe(false);
    expect(await closedFor(server, 'client_limit')).toBeGreaterThanOrEqual(1);
  });

  it('at the server cap, closes the longest-idle connection to admit a new one', async () => {
    await eventually(async () => expect(await metric(server, 'capi_dns_server_tcp_connections')).toBe(0));
    const idle = await Promise.all(
      ['127.0.1.1', '127.0.1.2', '127.0.1.3', '127.0.1.4', '127.0.1.5', '127.0.1.6'].map((a) => open(a)),
    );
    await eventually(async () => expect(await metric(server, 'capi_dns_server_tcp_connections')).toBe(6));
    const oldest = ending(idle[0]!, 3000);
    const newcomer = await open('127.0.1.7');
    newcomer.write(framedQuery('a.xcc.test', 11));
    expect(await answers(newcomer, 1)).toEqual([11]);
    expect(await oldest).toBe('end');
    expect(await closedFor(server, 'evicted')).toBeGreaterThanOrEqual(1);
  });

  it('at the cap, with a pipeliner that never reads, answers new clients and sheds only the longest idle', async () => {
    await eventually(async () => expect(await metric(server, 'capi_dns_server_tcp_connections')).toBe(0));
    const evictedBefore = await closedFor(server, 'evicted');
    // Six connections fill the cap: three idle (A, B, C), a pipeliner (D) whose 2,200 queries for
    // the 32 KB answer fill the kernel's buffers and then its own, F idle, and E in the middle of
    // a message. B then asks a question, which makes it the most recently active.
    const [a, b, c] = await Promise.all(['127.0.2.1', '127.0.2.2', '127.0.2.3'].map((x) => open(x)));
    const d = await open('127.0.2.4');
    d.pause();
    d.write(Buffer.concat(Array.from({ length: 2200 }, (_, i) => framedQuery(BIG, i))));
    await eventually(async () =>
      expect(await metric(server, 'capi_dns_server_tcp_buffered_bytes')).toBeGreaterThan(16 * 1024),
    );
    const f = await open('127.0.2.6');
    b!.write(framedQuery('a.xcc.test', 21));
    expect(await answers(b!, 1)).toEqual([21]);
    const e = await open('127.0.2.5');
    e.write(framedQuery('a.xcc.test', 22).subarray(0, 1));
    await eventually(async () => expect(await metric(server, 'capi_dns_server_tcp_connections')).toBe(6));
    const endings = [a, b, c, d, e, f].map((s) => ending(s!, 500));

    // (E's 1 s message deadline is after the 500 ms watched.) Two newcomers, each answered at once: room is made by closing A, then C, the connections
    // idle the longest; not B (asked lately), D (answers unread), E (mid-message) or F.
    for (const [address, id] of [
      ['127.0.2.7', 31],
      ['127.0.2.8', 32],
    ] as const) {
      const newcomer = await open(address);
      newcomer.write(framedQuery('a.xcc.test', id));
      expect(await answers(newcomer, 1)).toEqual([id]);
    }
    expect(await Promise.all(endings)).toEqual(['end', 'open', 'end', 'open', 'open', 'open']);
    expect(await closedFor(server, 'evicted')).toBe(evictedBefore + 2);
  });

  it('answers pipelined queries up to the per-connection limit, then closes gracefully', async () => {
    const limited = await start(['--tcp-max-queries', '20']);
    try {
      const c = await connect(limited.server.port);
      sockets.push(c);
      c.write(Buffer.concat(Array.from({ length: 30 }, (_, i) => framedQuery('a.xcc.test', 100 + i))));
      const ids = await answers(c, 30);
      expect(ids).toEqual(Array.from({ length: 20 }, (_, i) => 100 + i));
      expect(c.readableEnded || (await ending(c, 2000)) === 'end').toBe(true);
      expect(await closedFor(limited.server, 'query_limit')).toBe(1);
    } finally {
      await limited.server.stop();
      rmSync(limited.dir, { recursive: true, force: true });
    }
  });

  it('listens on IPv6 and IPv4 for :PORT', async () => {
    expect((await dig(server.port, ['a.xcc.test', 'A'])).answer).toEqual(['a.xcc.test. 30 IN A 10.0.0.1']);
    expect((await dig(server.port, ['+tcp', 'a.xcc.test', 'A'])).answer).toHaveLength(1);
    expect((await dig(server.port, ['a.xcc.test', 'A'], '::1')).answer).toEqual([
      'a.xcc.test. 30 IN A 10.0.0.1',
    ]);
    expect((await dig(server.port, ['+tcp', 'a.xcc.test', 'A'], '::1')).answer).toHaveLength(1);
  });
});
