// Bad input to the transfers (issue 43, part 4): each case gets the clear
// answer the RFCs give and changes nothing served. TSIG with a wrong key, an
// unknown key or a skewed clock (RFC 8945: NOTAUTH with BADSIG, BADKEY,
// BADTIME); no TSIG, or a client not listed (REFUSED, logged); AXFR over UDP
// (REFUSED); IXFR from a serial that never existed (the whole zone) or from
// the future (our SOA alone); a NOTIFY sent to us (NOTIMP: we are nobody's
// secondary); a secondary that never reads (reset by the TCP limits, its slot
// given back); a storm of transfers (bounded; the rest SERVFAIL, queries answered).
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import dnsPacket from 'dns-packet';
import { dig } from '../support/dns.js';
import { eventually } from '../support/kube.js';
import { sumMetric } from '../support/metrics.js';
import { newKey } from '../support/secondaries.js';
import { transfer, transferRequest } from '../support/transfer-client.js';
import { startTsigPrimary, type TsigPrimary } from '../support/tsig-primary.js';

const ZONE = 'bad.test';
const PRIMARY = '127.43.2.1';
const LISTED = '127.43.2.2';
const NOT_LISTED = '127.43.2.9';
/** Large enough that a client that never reads leaves most of the stream unsent. */
const RECORDS = 20_000;

describe('bad input to zone transfers', () => {
  const key = newKey('bad-key');
  let primary: TsigPrimary | undefined;
  let port: number;
  let serial: number;

  async function metric(name: string, labels: Record<string, string>): Promise<number> {
    return sumMetric(await primary!.metrics(), name, labels);
  }

  const servedSerial = () => primary!.servedSerial();

  beforeAll(async () => {
    // In documents of 1,000 records, as the operator writes record sets.
    const documents = Array.from({ length: RECORDS / 1000 }, (_, d) => {
      const records = Array.from({ length: 1000 }, (_, j) => {
        const i = d * 1000 + j;
        return `  - {name: "h${i}.${ZONE}", type: A, values: ["10.0.${i >> 8}.${i & 255}"]}`;
      });
      return `apiVersion: connectivity.tanzu.vmware.com/v1alpha1\nkind: DNSRecordSet\nmetadata: {name: many-${d}, namespace: capi-dns}\nspec:\n  records:\n${records.join('\n')}\n`;
    });
    primary = await startTsigPrimary({
      zone: ZONE,
      address: PRIMARY,
      key,
      records: documents.join('---\n'),
      // A port nobody listens on: its NOTIFYs go unanswered, which is not what is tested here.
      secondaries: [`${LISTED}:9`],
      args: ['--transfer-max-concurrent', '3', '--tcp-idle-timeout', '1s'],
      waitFor: `h${RECORDS - 1}.${ZONE}`,
    });
    port = primary.port;
    serial = await servedSerial();
  });

  afterAll(async () => {
    await primary?.stop();
  });

  afterEach(async () => {
    // Whatever a case sent, what is served stays.
    expect(await servedSerial()).toBe(serial);
  });

  const ask = { address: PRIMARY, source: LISTED, zone: ZONE, qtype: 'AXFR' as const };

  it('a wrong secret: NOTAUTH with BADSIG, unsigned', async () => {
    const wrong = { ...key, secret: newKey('x').secret };
    const answer = await transfer({ ...ask, port, key: wrong });
    expect([answer.rcode, answer.tsigError]).toEqual(['NOTAUTH', 16]);
    // dig says so too.
    const d = await dig(
      port,
      ['-b', LISTED, '-y', `hmac-sha256:${key.name}:${wrong.secret}`, ZONE, 'AXFR'],
      PRIMARY,
    );
    expect(d.stdout).toMatch(/BADSIG/);
    expect(primary!.server.logs()).toMatch(/"zone transfer refused".*|"reason":"TSIG BADSIG"/);
  });

  it('an unknown key: NOTAUTH with BADKEY', async () => {
    const answer = await transfer({ ...ask, port, key: { ...key, name: 'someone-else' } });
    expect([answer.rcode, answer.tsigError]).toEqual(['NOTAUTH', 17]);
  });

  it('a clock skewed beyond the fudge: NOTAUTH with BADTIME, signed, our time in Other Data', async () => {
    const answer = await transfer({ ...ask, port, key, skewSeconds: 1000 });
    expect([answer.rcode, answer.tsigError]).toEqual(['NOTAUTH', 18]);
  });

  it('no TSIG, or a client not listed: REFUSED, and logged', async () => {
    expect((await transfer({ ...ask, port })).rcode).toBe('REFUSED');
    expect((await transfer({ ...ask, port, key, source: NOT_LISTED })).rcode).toBe('REFUSED');
    await eventually(async () => expect(primary!.server.logs()).toMatch(/"zone transfer refused"/), 5000);
    expect(
      await metric('capi_dns_server_transfers_total', { zone: ZONE, result: 'refused' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('AXFR over UDP: REFUSED (RFC 5936 section 4.2), signed when asked signed', async () => {
    for (const signed of [false, true]) {
      const request = transferRequest({ ...ask, port, key: signed ? key : undefined });
      const response = await udpExchange(request);
      expect(rcodeOf(response)).toBe('REFUSED');
    }
  });

  it('IXFR from a serial that never existed: the whole zone; from the future: our SOA alone', async () => {
    const old = await transfer({ ...ask, port, key, qtype: 'IXFR', serial: 12345 });
    expect(old.rcode).toBe('NOERROR');
    expect(old.answers.filter((a) => a.type === 'A')).toHaveLength(RECORDS);
    const future = await transfer({ ...ask, port, key, qtype: 'IXFR', serial: (serial + 1000) >>> 0 });
    expect(future.answers).toHaveLength(1);
    expect((future.answers[0] as { data: { serial: number } }).data.serial).toBe(serial);
  });

  it("a NOTIFY sent to us, from anyone: NOTIMP (we are nobody's secondary)", async () => {
    const notify = dnsPacket.encode({
      type: 'query',
      id: 7,
      flags: dnsPacket.AUTHORITATIVE_ANSWER,
      questions: [{ type: 'SOA', name: ZONE, class: 'IN' }],
    });
    notify[2] = (4 << 3) | 0x04; // opcode NOTIFY (RFC 1996), AA
    const response = await udpExchange(notify, NOT_LISTED);
    expect(rcodeOf(response)).toBe('NOTIMP');
  });

  it('a secondary that never reads holds nothing of the process, and its connection is closed', async () => {
    const closedBefore =
      (await metric('capi_dns_server_tcp_connections_closed_total', { reason: 'idle' })) +
      (await metric('capi_dns_server_tcp_connections_closed_total', { reason: 'write_stalled' }));
    const stalled = await neverReadingClient(transferRequest({ ...ask, port, key }));
    try {
      // Meanwhile queries are answered.
      expect((await dig(port, ['+short', `h7.${ZONE}`], PRIMARY)).stdout.trim()).toBe('10.0.0.7');
      // The stream stops at the high-water mark (16 KiB and one message); the kernel holds the
      // rest of what it took (its send buffer grows to net.ipv4.tcp_wmem's maximum, 4 MiB, which
      // this zone of about 600 KB fits). Then --tcp-idle-timeout (1 s) closes the connection:
      // "idle" when the kernel took the whole zone, "write_stalled" when it did not.
      await eventually(async () => {
        expect(await metric('capi_dns_server_tcp_buffered_bytes', {})).toBeLessThanOrEqual(
          16 * 1024 + 65_537,
        );
        const closed =
          (await metric('capi_dns_server_tcp_connections_closed_total', { reason: 'idle' })) +
          (await metric('capi_dns_server_tcp_connections_closed_total', { reason: 'write_stalled' }));
        expect(closed).toBeGreaterThan(closedBefore);
        expect(await metric('capi_dns_server_tcp_connections', {})).toBe(0);
      }, 10_000);
    } finally {
      stalled.kill('SIGKILL');
    }
    const after = await transfer({ ...ask, port, key });
    expect(after.answers.filter((a) => a.type === 'A')).toHaveLength(RECORDS);
  });

  it('a storm of 30 transfers at once: each complete or SERVFAIL (busy), queries answered meanwhile', async () => {
    const storm = Array.from({ length: 30 }, () =>
      transfer({ ...ask, port, key, timeoutMs: 60_000 }).then(
        (a) => (a.rcode === 'NOERROR' ? a.answers.filter((r) => r.type === 'A').length : a.rcode),
        (err: Error) => `error ${err.message}`,
      ),
    );
    const during = await dig(port, ['+short', `h9.${ZONE}`], PRIMARY);
    const results = await Promise.all(storm);
    expect(during.stdout.trim()).toBe('10.0.0.9');
    expect(results.every((r) => r === RECORDS || r === 'SERVFAIL')).toBe(true);
    expect(results.filter((r) => r === RECORDS).length).toBeGreaterThanOrEqual(3);
    expect(await metric('capi_dns_server_tcp_buffered_bytes', {})).toBeLessThanOrEqual(16 * 1024 + 65_537);
  });

  function rcodeOf(response: Buffer): string | undefined {
    return (dnsPacket.decode(response) as { rcode?: string }).rcode;
  }

  function udpExchange(msg: Buffer, source = LISTED): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const sock = dgram.createSocket('udp4');
      const timer = setTimeout(() => {
        sock.close();
        reject(new Error('no UDP answer'));
      }, 3000);
      sock.on('message', (m) => {
        clearTimeout(timer);
        sock.close();
        resolve(m);
      });
      sock.bind(0, source, () => sock.send(msg, port, PRIMARY));
    });
  }

  /**
   * A client that sends the request and never reads, with a 4 KiB receive buffer (Node cannot set
   * SO_RCVBUF on TCP, Python can): the server's stream stops at its high-water mark.
   */
  function neverReadingClient(request: Buffer): Promise<ReturnType<typeof spawn>> {
    const framed = Buffer.alloc(2 + request.length);
    framed.writeUInt16BE(request.length, 0);
    request.copy(framed, 2);
    const script = `
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.bind(("${LISTED}", 0))
s.connect(("${PRIMARY}", ${port}))
s.sendall(bytes.fromhex("${framed.toString('hex')}"))
print("sent", flush=True)
time.sleep(60)
`;
    const child = spawn('python3', ['-c', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    return new Promise((resolve, reject) => {
      child.stdout!.once('data', () => resolve(child));
      child.once('exit', (code) => reject(new Error(`python client exited ${code}`)));
    });
  }
});
