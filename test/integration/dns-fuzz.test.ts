// Robustness on real sockets: 100,000 random and mutated packets over UDP,
// and a few thousand over TCP (also a connection fed garbage lengths), then
// the server must still be running and answer correctly.
import dgram from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import dnsPacket from 'dns-packet';
import { mutatedPackets } from '../support/fuzz.js';
import { dig, startDnsServer, type DnsProcess } from '../support/dns.js';
import { sumMetric } from '../support/metrics.js';

const PACKETS = 100_000;

function seeds(): Buffer[] {
  const names = ['a.xcc.test', 'x.y.gw.xcc.test', 'www.xcc.test', 'nope.xcc.test', 'xcc.test', 'example.com'];
  return names.flatMap((name, i) =>
    (['A', 'AAAA', 'SRV', 'TXT', 'SOA'] as const).map((type, j) =>
      dnsPacket.encode({
        type: 'query',
        id: i * 16 + j,
        questions: [{ name, type, class: 'IN' }],
        additionals:
          j % 2 ? [{ type: 'OPT', name: '.', udpPayloadSize: 4096, flags: 0 } as dnsPacket.Answer] : [],
      }),
    ),
  );
}

describe.each(['native', 'dgram'] as const)(
  'dns-server (UDP through %s) under random and mutated packets',
  (udpIo) => {
    let dir: string;
    let server: DnsProcess;

    beforeAll(async () => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-fuzz-'));
      const file = path.join(dir, 'records.yaml');
      writeFileSync(
        file,
        `kind: DNSRecordSet
apiVersion: connectivity.tanzu.vmware.com/v1alpha1
metadata: {name: fuzz}
spec:
  records:
  - {name: a.xcc.test, type: A, values: ["10.0.0.1"]}
  - {name: "*.gw.xcc.test", type: A, values: ["10.0.0.5"]}
  - {name: www.xcc.test, type: CNAME, values: [a.xcc.test]}
  - {name: srv.xcc.test, type: SRV, values: ["0 5 80 a.xcc.test"]}
`,
      );
      server = await startDnsServer(
        ['--zone', 'xcc.test', '--records-file', file, '--tcp-idle-timeout', '2s', '--udp-io', udpIo],
        {
          health: true,
        },
      );
    });
    afterAll(async () => {
      await server?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it(`survives ${PACKETS} packets over UDP and garbage over TCP, then answers correctly`, async () => {
      const sock = dgram.createSocket('udp4');
      let responses = 0;
      sock.on('message', () => responses++);
      await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', () => resolve()));
      const packets = mutatedPackets(seeds(), PACKETS, 7);
      let sent = 0;
      // In batches, each awaited, so that the kernel's buffers (not the server) set the pace.
      for (;;) {
        const batch: Promise<void>[] = [];
        for (let i = 0; i < 200; i++) {
          const next = packets.next();
          if (next.done) break;
          batch.push(
            new Promise((resolve) => sock.send(next.value, server.port, '127.0.0.1', () => resolve())),
          );
        }
        if (batch.length === 0) break;
        await Promise.all(batch);
        sent += batch.length;
        // Paced, so that the packets reach the server rather than overflow the socket buffer.
        await new Promise((r) => setTimeout(r, 4));
      }
      await new Promise((r) => setTimeout(r, 500));
      sock.close();
      expect(sent).toBe(PACKETS);
      const metrics = await (await fetch(`http://127.0.0.1:${server.healthPort}/metrics`)).text();
      const received = sumMetric(metrics, 'capi_dns_server_dns_requests_total', { proto: 'udp' });
      process.stderr.write(
        `fuzz: sent ${sent} UDP packets, server read ${received}, answered ${responses}\n`,
      );
      expect(received).toBeGreaterThan(PACKETS * 0.95);
      expect(responses).toBeGreaterThan(PACKETS / 4);

      // TCP: 3,000 mutated frames on a few connections, and a connection with a bogus length prefix.
      const tcpPackets = mutatedPackets(seeds(), 3000, 9);
      for (let c = 0; c < 6; c++) {
        const socket = net.connect(server.port, '127.0.0.1');
        socket.on('error', () => undefined);
        await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
        const frames: Buffer[] = [];
        for (let i = 0; i < 500; i++) {
          const msg = tcpPackets.next().value!;
          const framed = Buffer.alloc(2 + msg.length);
          framed.writeUInt16BE(msg.length, 0);
          msg.copy(framed, 2);
          frames.push(framed);
        }
        socket.write(Buffer.concat(frames));
        if (c % 2) socket.write(Buffer.from([0xff, 0xff, 1, 2, 3]));
        socket.end();
        await new Promise((r) => setTimeout(r, 100));
        socket.destroy();
      }

      expect(server.child.exitCode).toBeNull();
      expect((await dig(server.port, ['+short', 'a.xcc.test', 'A'])).stdout.trim()).toBe('10.0.0.1');
      expect((await dig(server.port, ['+short', '+tcp', 'k.gw.xcc.test', 'A'])).stdout.trim()).toBe(
        '10.0.0.5',
      );
      expect((await dig(server.port, ['nope.xcc.test', 'A'])).status).toBe('NXDOMAIN');
      expect(server.logs()).not.toMatch(/failed to answer a query/);
      expect(server.logs()).not.toMatch(/batched native module is not usable/);
    });
  },
);
