// DNSSEC (ADR 0106) checked by validators that are not our code: delv with the
// zone's DNSKEY as trust anchor, unbound as a validating resolver (the AD bit),
// dnssec-verify and ldns-verify-zone on the signed zone written out, and NSD
// serving the records our server signed, compared answer by answer.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import dnsPacket from 'dns-packet';
import { stringify } from 'yaml';
import type { DNSRecord, HealthCheck } from '../../api/index.js';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { dig, exchange, startDnsServer, startNsd, type DnsProcess } from '../support/dns.js';
import { delv, delvAnchor, startUnbound } from '../support/dnssec.js';
import { asRecordSets, generateQueries, generateZone } from '../support/dnszone.js';
import { eventually } from '../support/kube.js';

const run = promisify(execFile);
const ZONE = 'xcc.test';

/** A P-256 key in PKCS#8 PEM, and its public key as a DNSKEY holds it (RFC 6605 section 4: x || y). */
function p256Key(): { pem: string; publicKey: string } {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  const xy = Buffer.concat([Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
  return {
    pem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicKey: xy.toString('base64'),
  };
}
const tcpCheck = (port: number): HealthCheck => ({
  protocol: 'TCP',
  port,
  periodSeconds: 1,
  timeoutSeconds: 1,
  failureThreshold: 1,
  successThreshold: 1,
});

/** A TCP port that accepts, on one loopback address: what a health check finds healthy. */
async function listening(host: string): Promise<{ port: number; close(): Promise<void> }> {
  const server = net.createServer((s) => s.destroy());
  const port = await new Promise<number>((resolve) =>
    server.listen(0, host, () => resolve((server.address() as net.AddressInfo).port)),
  );
  return { port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('DNSSEC: the dns-server signs when it compiles, validators agree', () => {
  const generated = generateZone({ hosts: 60, gateways: 10 }, ZONE);
  const { pem, publicKey } = p256Key();
  let dir: string;
  let ours: DnsProcess;
  let unbound: DnsProcess;
  let anchor: string;
  let ds: string;
  const targets: { port: number; close(): Promise<void> }[] = [];
  let records: DNSRecord[];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-dnssec-'));
    const [a, b, primary] = await Promise.all([
      listening('127.0.0.2'),
      listening('127.0.0.3'),
      listening('127.0.0.4'),
    ]);
    targets.push(a, b, primary);
    // TTL 0: unbound asks again every time, so each weighted draw and the failover reach it.
    records = [
      ...generated.records,
      {
        name: `shop.${ZONE}`,
        type: 'A',
        ttl: 0,
        values: ['127.0.0.2'],
        policy: { cluster: 'dev/a', tier: 0, weight: 1, healthCheck: tcpCheck(a.port) },
      },
      {
        name: `shop.${ZONE}`,
        type: 'A',
        ttl: 0,
        values: ['127.0.0.3'],
        policy: { cluster: 'dev/b', tier: 0, weight: 1, healthCheck: tcpCheck(b.port) },
      },
      {
        name: `fail.${ZONE}`,
        type: 'A',
        ttl: 0,
        values: ['127.0.0.4'],
        policy: { cluster: 'dev/a', tier: 0, healthCheck: tcpCheck(primary.port) },
      },
      {
        name: `fail.${ZONE}`,
        type: 'A',
        ttl: 0,
        values: ['10.77.0.1'],
        policy: { cluster: 'dev/b', tier: 1 },
      },
    ];
    const file = path.join(dir, 'records.yaml');
    writeFileSync(
      file,
      asRecordSets(records, 100)
        .map((s) => stringify(s))
        .join('---\n'),
    );
    writeFileSync(path.join(dir, 'key.pem'), pem);
    ours = await startDnsServer(
      ['--zone', ZONE, '--records-file', file, '--dnssec-key', `${ZONE}=${path.join(dir, 'key.pem')}`],
      { health: true },
    );
    await eventually(async () => {
      const res = await fetch(`http://127.0.0.1:${ours.healthPort}/readyz`);
      if (res.status !== 200) throw new Error(`readyz ${res.status}`);
    });
    // The anchors: the key we gave, as the server publishes it; its DS as BIND computes it.
    const dnskey = (await dig(ours.port, [ZONE, 'DNSKEY', '+tcp'])).answer[0]!;
    const fields = dnskey.split(' ');
    expect([...fields.slice(3, 7), fields.slice(7).join('')]).toEqual([
      'DNSKEY',
      '257',
      '3',
      '13',
      publicKey,
    ]);
    const keyFile = path.join(dir, 'dnskey');
    writeFileSync(keyFile, `${dnskey}\n`);
    ds = (await run('dnssec-dsfromkey', ['-2', '-f', keyFile, ZONE])).stdout
      .trim()
      .split(/\s+/)
      .slice(3)
      .join(' ');
    anchor = delvAnchor(ZONE, `257 3 13 ${fields.slice(7).join('')}`, dir);
    unbound = await startUnbound(ZONE, ds, ours.port);
  }, 60_000);

  afterAll(async () => {
    await unbound?.stop();
    await ours?.stop();
    await Promise.all(targets.map((t) => t.close()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // [name, type, what a validator must conclude]
  const CORPUS: [string, string, 'answer' | 'nxdomain' | 'nodata'][] = [
    [`h1.c1.${ZONE}`, 'A', 'answer'],
    [`h3.c3.${ZONE}`, 'AAAA', 'answer'],
    [`h1.c1.${ZONE}`, 'TXT', 'nodata'],
    [`nothing.here.${ZONE}`, 'A', 'nodata'], // the apex wildcard "*.xcc.test" holds only TXT
    [`x.h1.c1.${ZONE}`, 'A', 'nxdomain'],
    [`zzzz.c1.${ZONE}`, 'A', 'nxdomain'],
    [`c.d.${ZONE}`, 'TXT', 'nodata'], // an empty non-terminal
    [`x.y.gateway.cluster-0.team-0.clusters.${ZONE}`, 'A', 'answer'], // a wildcard
    [`a.gateway.cluster-1.team-1.clusters.${ZONE}`, 'AAAA', 'nodata'], // a wildcard without the type
    [`blocked.gateway.cluster-0.team-0.clusters.${ZONE}`, 'A', 'nodata'],
    [`chain.${ZONE}`, 'A', 'answer'],
    [`to-wild.${ZONE}`, 'A', 'answer'],
    [`dangling.${ZONE}`, 'A', 'nodata'], // its target is the apex wildcard's, without A
    [`_http._tcp.svc.${ZONE}`, 'SRV', 'answer'],
    [`big.${ZONE}`, 'A', 'answer'],
    [ZONE, 'SOA', 'answer'],
    [ZONE, 'NS', 'answer'],
    [ZONE, 'DNSKEY', 'answer'],
    [`h1.c1.${ZONE}`, 'DNSKEY', 'nodata'], // DNSKEY below the apex: none
    [`anything.${ZONE}`, 'TXT', 'answer'], // the apex wildcard
  ];

  it.each(CORPUS)('delv validates %s %s (%s)', async (name, type, expected) => {
    const r = await delv(ours.port, anchor, ZONE, name, type);
    expect([name, type, r.validated]).toEqual([name, type, true]);
    if (expected === 'nxdomain') expect(r.output).toMatch(/NXDOMAIN/);
    if (expected === 'nodata') expect(r.output).toMatch(/NXRRSET/);
  });

  it.each(CORPUS)('unbound validates %s %s (%s): AD set', async (name, type, expected) => {
    const r = await dig(unbound.port, ['+dnssec', name, type]);
    expect([name, type, r.status, r.flags.includes('ad')]).toEqual([
      name,
      type,
      expected === 'nxdomain' ? 'NXDOMAIN' : 'NOERROR',
      true,
    ]);
    if (expected === 'answer') expect(r.answer.length).toBeGreaterThan(0);
  });

  it('each weighted variant validates, in delv and in unbound', async () => {
    const seenDelv = new Set<string>();
    const seenUnbound = new Set<string>();
    for (let i = 0; i < 40 && (seenDelv.size < 2 || seenUnbound.size < 2); i++) {
      const d = await delv(ours.port, anchor, ZONE, `shop.${ZONE}`, 'A');
      expect(d.validated).toBe(true);
      seenDelv.add(/\sA\s+(127\.0\.0\.\d)/.exec(d.output)![1]!);
      const u = await dig(unbound.port, ['+dnssec', `shop.${ZONE}`, 'A']);
      expect(u.flags).toContain('ad');
      seenUnbound.add(
        u.answer
          .find((l) => / A /.test(l))!
          .split(' ')
          .pop()!,
      );
    }
    expect([...seenDelv].sort()).toEqual(['127.0.0.2', '127.0.0.3']);
    expect([...seenUnbound].sort()).toEqual(['127.0.0.2', '127.0.0.3']);
  });

  it('the answer after a failover validates', async () => {
    const before = await delv(ours.port, anchor, ZONE, `fail.${ZONE}`, 'A');
    expect(before.validated).toBe(true);
    expect(before.output).toMatch(/127\.0\.0\.4/);
    await targets[2]!.close();
    await eventually(async () => {
      const r = await dig(ours.port, [`fail.${ZONE}`, 'A', '+short']);
      if (!r.stdout.includes('10.77.0.1')) throw new Error(`still ${r.stdout}`);
    }, 20_000);
    const after = await delv(ours.port, anchor, ZONE, `fail.${ZONE}`, 'A');
    expect(after.validated).toBe(true);
    expect(after.output).toMatch(/10\.77\.0\.1/);
    const u = await dig(unbound.port, ['+dnssec', `fail.${ZONE}`, 'A']);
    expect(u.flags).toContain('ad');
    expect(u.answer.join('\n')).toMatch(/10\.77\.0\.1/);
  });

  it('answers DO with a tiny EDNS buffer truncated, and whole over TCP', async () => {
    const udp = await dig(ours.port, ['+dnssec', '+bufsize=512', '+ignore', `big.${ZONE}`, 'A']);
    expect(udp.flags).toContain('tc');
    const tcp = await dig(ours.port, ['+dnssec', '+bufsize=512', `big.${ZONE}`, 'A']);
    expect(tcp.flags).not.toContain('tc');
    expect(tcp.answer.filter((l) => / RRSIG /.test(l))).toHaveLength(1);
  });

  it('dnssec-verify and ldns-verify-zone accept the zone as the server serves it', async () => {
    const file = path.join(dir, 'zone.served');
    writeFileSync(
      file,
      await servedZone(ours.port, [ZONE, ...generated.owners, `shop.${ZONE}`, `fail.${ZONE}`]),
    );
    const bind = await run('dnssec-verify', ['-z', '-o', ZONE, file]);
    expect(bind.stderr + bind.stdout).toMatch(/Zone fully signed/);
    const ldns = await run('ldns-verify-zone', [file]);
    expect(ldns.stdout + ldns.stderr).toMatch(/Zone is verified and complete/);
  });

  describe('against NSD serving the records our server signed', () => {
    let nsd: DnsProcess;
    const policyNames = new Set([`shop.${ZONE}`, `fail.${ZONE}`]);

    beforeAll(async () => {
      nsd = await startNsd(ZONE, await servedZone(ours.port, [ZONE, ...generated.owners, ...policyNames]));
    }, 60_000);
    afterAll(async () => nsd?.stop());

    it('gives the same RRsets, signatures and proofs for generated queries with DO', async () => {
      const queries = generateQueries(generated, 300).filter((q) => !policyNames.has(q.name.toLowerCase()));
      const differences: string[] = [];
      let negative = 0;
      for (const [i, q] of queries.entries()) {
        const msg = dnsPacket.encode({
          type: 'query',
          id: i + 1,
          questions: [{ name: q.name, type: q.type as dnsPacket.RecordType, class: 'IN' }],
          additionals: [
            {
              type: 'OPT',
              name: '.',
              udpPayloadSize: q.edns ?? 1232,
              flags: dnsPacket.DNSSEC_OK,
            } as dnsPacket.Answer,
          ],
        });
        const transport = q.tcp ? 'tcp' : 'udp';
        const [a, b] = await Promise.all([
          exchange(ours.port, msg, transport),
          exchange(nsd.port, msg, transport),
        ]);
        const [mine, theirs] = [a, b].map(comparable);
        if (mine!.authorities.some((r) => r.includes(' NSEC '))) negative++;
        if (JSON.stringify(mine) !== JSON.stringify(theirs))
          differences.push(
            `${q.name} ${q.type}\n  ours: ${JSON.stringify(mine)}\n  nsd:  ${JSON.stringify(theirs)}`,
          );
      }
      expect(differences.slice(0, 3)).toEqual([]);
      expect(negative).toBeGreaterThan(30);
    });
  });

  // Last: it changes the key. CSK rollover with double DS (ADR 0106): the parent publishes the new
  // key's DS beside the old one, then the zone switches key at once.
  it('rolls the key over once: resolvers trusting both DS validate before and after the switch', async () => {
    const next = p256Key();
    const keyFile = path.join(dir, 'next-dnskey');
    writeFileSync(keyFile, `${ZONE}. 30 IN DNSKEY 257 3 13 ${next.publicKey}\n`);
    const nextDs = (await run('dnssec-dsfromkey', ['-2', '-f', keyFile, ZONE])).stdout
      .trim()
      .split(/\s+/)
      .slice(3)
      .join(' ');
    const both = await startUnbound(ZONE, [ds, nextDs], ours.port);
    try {
      expect((await dig(both.port, ['+dnssec', `h1.c1.${ZONE}`, 'A'])).flags).toContain('ad');
      // The switch: the key file replaced whole (a rename, as a Secret volume's symlink swap).
      writeFileSync(path.join(dir, 'key.next'), next.pem);
      await run('mv', [path.join(dir, 'key.next'), path.join(dir, 'key.pem')]);
      await eventually(async () => {
        const served = (await dig(ours.port, [ZONE, 'DNSKEY', '+tcp'])).answer[0] ?? '';
        if (served.split(' ').slice(7).join('') !== next.publicKey) throw new Error(`still ${served}`);
      }, 20_000);
      // Within unbound's caches turning over (cache-max-ttl 1; on a loaded machine its key and
      // negative caches have once taken longer than the 1.5 s this waited for at first).
      for (const [name, type] of [
        [`h1.c1.${ZONE}`, 'A'],
        [`nothing.here.${ZONE}`, 'A'],
        [`x.h1.c1.${ZONE}`, 'A'],
      ])
        await eventually(async () => {
          const r = await dig(both.port, ['+dnssec', name!, type!]);
          expect([name, r.status, r.flags.includes('ad')]).toEqual([name, r.status, true]);
        }, 10_000);
      const nextAnchor = delvAnchor(ZONE, `257 3 13 ${next.publicKey}`, path.join(dir));
      expect((await delv(ours.port, nextAnchor, ZONE, `h1.c1.${ZONE}`, 'A')).validated).toBe(true);
      // The old key alone no longer validates anything: the switch really happened.
      const old = await delv(ours.port, anchor, ZONE, `h1.c1.${ZONE}`, 'A');
      expect(old.validated).toBe(false);
    } finally {
      await both.stop();
    }
  });
});

/**
 * The zone as the server serves it: every RRset and its RRSIG as the answer to ANY with DO at each
 * name that holds data (our ANY answers every RRset, NSEC and DNSKEY included), in RFC 3597's form.
 */
async function servedZone(port: number, owners: string[]): Promise<string> {
  const lines = [`$ORIGIN ${ZONE}.`];
  const seen = new Set<string>();
  for (const owner of owners) {
    const query = dnsPacket.encode({
      type: 'query',
      id: 1,
      questions: [{ name: owner, type: 'ANY' as dnsPacket.RecordType, class: 'IN' }],
      additionals: [
        { type: 'OPT', name: '.', udpPayloadSize: 4096, flags: dnsPacket.DNSSEC_OK } as dnsPacket.Answer,
      ],
    });
    for (const rr of dnsPacket.decode(await exchange(port, query, 'tcp')).answers ?? []) {
      const codec = (dnsPacket as unknown as Record<string, { encode(d: unknown): Buffer }>)[
        rr.type.toLowerCase()
      ]!;
      const rdata = codec.encode((rr as { data: unknown }).data).subarray(2);
      const line = `${rr.name}. ${(rr as { ttl: number }).ttl} IN ${rr.type} \\# ${rdata.length} ${rdata.toString('hex')}`;
      if (!seen.has(line)) lines.push(line);
      seen.add(line);
    }
  }
  return `${lines.join('\n')}\n`;
}

function comparable(raw: Buffer) {
  const p = dnsPacket.decode(raw);
  const rr = (a: dnsPacket.Answer) =>
    `${a.name.toLowerCase()} ${'ttl' in a ? a.ttl : ''} ${a.type} ${JSON.stringify((a as { data?: unknown }).data)}`;
  return {
    rcode: (p as { rcode?: string }).rcode,
    flags: (p.flags ?? 0) & ~0x0100, // RD as asked
    answers: (p.answers ?? []).map(rr).sort(),
    authorities: (p.authorities ?? []).map(rr).sort(),
  };
}
