// The batched UDP path when the kernel will not take more answers: the
// dns-server runs in a network namespace of this test's own whose loopback
// sends its answers at 20 Mbit/s (an htb class; the queries pass at once), so
// answers wait in the queue, charged to the socket, until its send buffer is
// full and sendmmsg says EAGAIN. The
// module then waits once (5 ms) and drops the rest of the batch, counted: no
// answer is queued beyond the ring, none is sent twice, and the server goes
// on answering.
//
// ENOBUFS takes the same branch in udp_batch.c but cannot be provoked here:
// Linux reports a queue's drop to a UDP socket only with IP_RECVERR set
// (udp_send_skb counts it as SndbufErrors and returns success), which
// neither Node nor the module sets.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { eventually } from '../support/kube.js';
import { repoRoot } from '../support/paths.js';
import { stopChild } from '../support/stop-child.js';
import { DNS_SERVER_NODE_FLAGS } from '../../scripts/images/dns-server-node-flags.js';

/** Four TXT strings of 250 octets: an answer of about 1,050 octets. */
const RECORDS = `apiVersion: connectivity.tanzu.vmware.com/v1alpha1
kind: DNSRecordSet
metadata: {name: send-buffer}
spec:
  records:
  - {name: big.xcc.test, type: TXT, values: [${[1, 2, 3, 4].map((i) => `"${String(i).repeat(250)}"`).join(', ')}]}
  - {name: a.xcc.test, type: A, values: ["10.0.0.1"]}
`;
const PORT = 5300;
/** About twice the answers the send buffer holds (8 MB, some 2.3 KB of it per answer). */
const QUERIES = 8000;

/**
 * Sends `count` queries for big.xcc.test TXT as fast as it can, waits for the queue to drain, then
 * asks a.xcc.test A once (id 65535); prints how many answers came per id, as JSON.
 */
const CLIENT = `
import dgram from 'node:dgram';
import dnsPacket from 'dns-packet';
const [port, count] = process.argv.slice(1).map(Number);
const sock = dgram.createSocket({ type: 'udp4', recvBufferSize: 8 << 20 });
const answers = {};
sock.on('message', (m) => { const id = m.readUInt16BE(0); answers[id] = (answers[id] ?? 0) + 1; });
await new Promise((r) => sock.bind(0, '127.0.0.1', r));
const query = (id, name, type) => dnsPacket.encode({ type: 'query', id, questions: [{ name, type, class: 'IN' }],
  additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: 0 }] });
for (let id = 0; id < count; id++) {
  sock.send(query(id, 'big.xcc.test', 'TXT'), port, '127.0.0.1');
  if (id % 200 === 199) await new Promise((r) => setImmediate(r));
}
await new Promise((r) => setTimeout(r, 3000));
sock.send(query(65535, 'a.xcc.test', 'A'), port, '127.0.0.1');
await new Promise((r) => setTimeout(r, 1000));
sock.close();
process.stdout.write(JSON.stringify(answers));
`;

/** The server's log lines, parsed. */
function entries(logs: string): Record<string, unknown>[] {
  return logs
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('dns-server UDP through native when the send buffer is full', () => {
  let dir: string;
  let server: ChildProcess | undefined;
  let logs = '';

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-send-buffer-'));
    writeFileSync(path.join(dir, 'records.yaml'), RECORDS);
    // unshare execs the shell and the shell execs node: the child's pid is the server's, inside
    // the namespace, which goes away with it.
    server = spawn(
      'unshare',
      [
        '--net',
        '--',
        'sh',
        '-c',
        [
          'ip link set lo up',
          // The server's answers (source port PORT) through a class of 20 Mbit/s whose queue holds
          // more than the socket's send buffer (8 MB at most: twice net.core.wmem_max, which a
          // namespace cannot lower); everything else, the queries first, at once. (htb: the kernel
          // here has neither prio nor netem.)
          'tc qdisc add dev lo root handle 1: htb default 20',
          'tc class add dev lo parent 1: classid 1:10 htb rate 20mbit',
          'tc class add dev lo parent 1: classid 1:20 htb rate 10gbit',
          'tc qdisc add dev lo parent 1:10 handle 10: pfifo limit 100000',
          `tc filter add dev lo parent 1: protocol ip u32 match ip sport ${PORT} 0xffff flowid 1:10`,
          'exec "$0" "$@"',
        ].join(' && '),
        process.execPath,
        ...DNS_SERVER_NODE_FLAGS,
        path.join(repoRoot(), 'dist', 'dns-server', 'main.js'),
        ...['--listen', `127.0.0.1:${PORT}`, '--zone', 'xcc.test', '--lameduck', '0s'],
        ...['--records-file', path.join(dir, 'records.yaml'), '--udp-io', 'native'],
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    readline.createInterface({ input: server.stderr! }).on('line', (l) => (logs += `${l}\n`));
    await eventually(async () => expect(logs).toMatch(/"recordSets":1.*"msg":"zones rebuilt"/));
    expect(logs).toMatch(/"msg":"serving"/);
    expect(logs).not.toMatch(/batched native module is not usable/);
  });

  afterAll(async () => {
    if (server) await stopChild(server, 5000);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('drops what does not fit, counted and logged, answers none twice, and keeps answering', async () => {
    const pid = server!.pid!;
    const rssBefore = rssKb(pid);
    const client = spawn(
      'nsenter',
      [
        `--net=/proc/${pid}/ns/net`,
        '--',
        process.execPath,
        '--input-type=module',
        '-e',
        CLIENT,
        String(PORT),
        '6000',
      ],
      { cwd: repoRoot(), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    client.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => client.once('exit', resolve));
    expect(code).toBe(0);
    const answers = JSON.parse(out) as Record<string, number>;
    const counts = Object.values(answers);
    // The last query, after the queue drained, is answered.
    expect(answers['65535']).toBe(1);
    expect(counts.filter((n) => n !== 1)).toEqual([]);
    // The buffer was full: some answers were dropped, and said so.
    await eventually(async () => expect(logs).toMatch(/"msg":"UDP answers not sent"/));
    const notSent = entries(logs).find((e) => e.msg === 'UDP answers not sent')!;
    expect(notSent.bufferFull).toBeGreaterThan(0);
    expect(notSent.lastError).toBe('EAGAIN');
    expect(counts.length).toBeLessThan(QUERIES + 1);
    // Nothing waits beyond the ring: resident memory did not grow by the answers dropped.
    expect(rssKb(pid) - rssBefore).toBeLessThan(32 * 1024);

    // Its totals at close: each answer went out once or was dropped once.
    await stopChild(server!, 5000);
    const closed = entries(logs).find((e) => e.msg === 'UDP batched path closed')!;
    const received = closed.received as number;
    const sent = closed.sent as number;
    const dropped = closed.notSent as number;
    expect(dropped).toBeGreaterThan(0);
    expect(sent + dropped).toBeLessThanOrEqual(received);
    expect(counts.length).toBeLessThanOrEqual(sent);
    process.stdout.write(
      `send buffer: ${QUERIES + 1} queries, ${received} read, ${sent} answers sent, ${dropped} dropped ` +
        `(${notSent.lastError as string}), ${counts.length} received by the client\n`,
    );
  });
});

function rssKb(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
}
