// Zone transfer to the DNS a company already runs (issue 43, part 2): NSD,
// Knot and BIND, each a secondary on a loopback address of its own, take the
// zone from our dns-server by AXFR with TSIG, and follow changes through
// NOTIFY and IXFR. A zone larger than one message streams over several. A
// failover decided by the dns-server's own probes (issue 33) reaches them
// within the NOTIFY and transfer time.
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import { dig } from '../support/dns.js';
import { eventually } from '../support/kube.js';
import {
  freePortOn,
  newKey,
  SECONDARY_KINDS,
  startSecondary,
  type Secondary,
  type SecondaryKind,
} from '../support/secondaries.js';
import { recordLines, transfer } from '../support/transfer-client.js';
import { startTsigPrimary, type TsigPrimary } from '../support/tsig-primary.js';

const ZONE = 'xfr.test';
const PRIMARY = '127.43.0.1';
const ADDRESSES: Record<SecondaryKind, string> = {
  nsd: '127.43.0.2',
  knot: '127.43.0.3',
  bind: '127.43.0.4',
};
/** Records of the "bulk" set: enough for the AXFR to need several 16,000-octet messages. */
const BULK = 1500;

/** The two gateways of "shop": tier 0 first, tier 1 when tier 0's check fails; TCP checks every second. */
const TIERS = ['127.43.0.20', '127.43.0.21'];
let checkPort = 0;

function shopRecords(): string {
  const check = `{protocol: TCP, port: ${checkPort}, periodSeconds: 1, timeoutSeconds: 1, failureThreshold: 1, successThreshold: 1}`;
  return TIERS.map(
    (address, tier) =>
      `  - {name: "shop.${ZONE}", type: A, values: ["${address}"], policy: {cluster: "dev/cluster-${tier}", tier: ${tier}, healthCheck: ${check}}}`,
  ).join('\n');
}

function recordsYaml(www: string): string {
  const bulk = Array.from({ length: BULK }, (_, i) => `"10.9.${i >> 8}.${i & 255}"`).join(', ');
  return `apiVersion: connectivity.tanzu.vmware.com/v1alpha1
kind: DNSRecordSet
metadata: {name: apps, namespace: capi-dns}
spec:
  records:
  - {name: "www.${ZONE}", type: A, values: ["${www}"]}
  - {name: "txt.${ZONE}", type: TXT, values: ["hello world"]}
  - {name: "_http._tcp.${ZONE}", type: SRV, values: ["0 5 8080 www.${ZONE}"]}
  - {name: "alias.${ZONE}", type: CNAME, values: ["www.${ZONE}"]}
  - {name: "v6.${ZONE}", type: AAAA, values: ["2001:db8::1"]}
${shopRecords()}
${Array.from({ length: BULK }, (_, i) => `  - {name: "h${i}.bulk.${ZONE}", type: A, values: [${bulk.split(', ')[i]}]}`).join('\n')}
`;
}

describe('zone transfer to NSD, Knot and BIND', () => {
  const key = newKey('xfr-key.');
  let primary: TsigPrimary | undefined;
  let port: number;
  const secondaries: Secondary[] = [];
  const gateways: net.Server[] = [];

  beforeAll(async () => {
    // The gateways the probes check: a listener on each tier's address.
    checkPort = await freePortOn(TIERS[0]!);
    for (const address of TIERS) {
      const gateway = net.createServer((socket) => socket.destroy());
      await new Promise<void>((resolve) => gateway.listen(checkPort, address, resolve));
      gateways.push(gateway);
    }
    const ports = Object.fromEntries(
      await Promise.all(SECONDARY_KINDS.map(async (k) => [k, await freePortOn(ADDRESSES[k])] as const)),
    ) as Record<SecondaryKind, number>;
    primary = await startTsigPrimary({
      zone: ZONE,
      address: PRIMARY,
      key,
      records: recordsYaml('10.0.0.1'),
      secondaries: SECONDARY_KINDS.map((k) => `${ADDRESSES[k]}:${ports[k]}`),
    });
    port = primary.port;
    for (const kind of SECONDARY_KINDS)
      secondaries.push(
        await startSecondary(kind, {
          zone: ZONE,
          primary: { address: PRIMARY, port },
          key,
          address: ADDRESSES[kind],
          port: ports[kind],
        }),
      );
  });

  afterAll(async () => {
    for (const g of gateways) g.close();
    for (const s of secondaries) await s.stop();
    await primary?.stop();
  });

  const servedSerial = () => primary!.servedSerial();

  it('each secondary takes the whole zone by AXFR with TSIG and answers as we do', async () => {
    const serial = await servedSerial();
    for (const s of secondaries) {
      await eventually(async () => expect(await s.serial()).toBe(serial), 20_000);
      for (const [name, type] of [
        [`www.${ZONE}`, 'A'],
        [`txt.${ZONE}`, 'TXT'],
        [`_http._tcp.${ZONE}`, 'SRV'],
        [`v6.${ZONE}`, 'AAAA'],
        [`h1499.bulk.${ZONE}`, 'A'],
      ] as const) {
        const ours = await dig(port, ['+norec', name, type], PRIMARY);
        const theirs = await dig(s.port, ['+norec', name, type], s.address);
        expect({ kind: s.kind, name, answer: theirs.answer }).toEqual({
          kind: s.kind,
          name,
          answer: ours.answer,
        });
      }
    }
    expect(primary!.server.logs()).toMatch(/"peer":"127\.43\.0\.2","type":"AXFR","result":"axfr"/);
  });

  it('a change reaches every secondary through NOTIFY and IXFR', async () => {
    const before = await servedSerial();
    writeFileSync(primary!.recordsFile, recordsYaml('10.0.0.2'));
    await eventually(async () => expect(await servedSerial()).not.toBe(before), 10_000);
    const after = await servedSerial();
    const began = Date.now();
    for (const s of secondaries) {
      await eventually(async () => {
        expect(await s.serial()).toBe(after);
        expect((await dig(s.port, ['+short', `www.${ZONE}`, 'A'], s.address)).stdout.trim()).toBe('10.0.0.2');
      }, 10_000);
    }
    // Well within a refresh (3,600 s): they were told.
    expect(Date.now() - began).toBeLessThan(10_000);
    for (const s of secondaries)
      expect(primary!.server.logs()).toMatch(
        new RegExp(
          `"peer":"${s.address.replaceAll('.', '\\.')}","type":"IXFR","result":"ixfr","serial":${after}`,
        ),
      );
    const metrics = await primary!.metrics();
    expect(metrics).toMatch(/capi_dns_server_transfers_total\{zone="xfr.test",result="ixfr"\} [3-9]/);
    for (const s of secondaries)
      expect(metrics).toContain(
        `capi_dns_server_secondary_serial{zone="xfr.test",secondary="${s.address}"} ${after}`,
      );
  });

  it('streams a zone larger than one message over several, each signed', async () => {
    const answer = await transfer({
      address: PRIMARY,
      port,
      source: ADDRESSES.nsd,
      zone: ZONE,
      qtype: 'AXFR',
      key,
    });
    expect(answer.rcode).toBe('NOERROR');
    expect(answer.messages.length).toBeGreaterThan(3);
    expect(answer.answers.filter((a) => a.type === 'SOA')).toHaveLength(2);
    // The bulk, five names, the NS, and shop (one address: the tier answering).
    expect(recordLines(answer.answers)).toHaveLength(BULK + 5 + 1 + 1);
    // dig checks every message's TSIG (RFC 8945 section 5.3.1) and fails the transfer on a bad one.
    const checked = await dig(
      port,
      ['-b', ADDRESSES.knot, '-y', `hmac-sha256:${key.name}:${key.secret}`, ZONE, 'AXFR'],
      PRIMARY,
    );
    expect(checked.stdout).toMatch(/XFR size: \d+ records \(messages [2-9]\d*/);
    expect(checked.stdout).not.toMatch(/failed|tsig verify failure/i);
  });

  it("a failover decided by the server's probes reaches every secondary within NOTIFY and IXFR", async () => {
    const answer = async (address: string, p: number) =>
      (await dig(p, ['+short', `shop.${ZONE}`, 'A'], address)).stdout.trim();
    for (const s of secondaries)
      await eventually(async () => expect(await answer(s.address, s.port)).toBe(TIERS[0]), 10_000);
    const before = await servedSerial();
    // Tier 0's gateway goes away: the next probe fails (threshold 1), tier 1 answers.
    await new Promise<void>((resolve) => gateways[0]!.close(() => resolve()));
    const began = Date.now();
    await eventually(async () => expect(await answer(PRIMARY, port)).toBe(TIERS[1]), 10_000);
    const servedAfter = Date.now() - began;
    expect(await servedSerial()).not.toBe(before);
    for (const s of secondaries)
      await eventually(async () => expect(await answer(s.address, s.port)).toBe(TIERS[1]), 10_000);
    const reachedAll = Date.now() - began;
    process.stderr.write(
      `failover: served by the primary after ${servedAfter} ms, by NSD, Knot and BIND after ${reachedAll} ms\n`,
    );
  });
});
