// Differential test: one generated zone served by the dns-server and by NSD
// (minimal-responses, like ours), the same query bytes sent to both, and the
// responses compared: RCODE, flags, and every section. Known, deliberate
// differences are listed (and tested for) rather than hidden.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import dnsPacket from 'dns-packet';
import { stringify } from 'yaml';
import { exchange, startDnsServer, startNsd, type DnsProcess } from '../support/dns.js';
import { eventually } from '../support/kube.js';
import {
  asRecordSets,
  generateQueries,
  generateZone,
  zoneFile,
  type GeneratedQuery,
} from '../support/dnszone.js';

const ZONE = 'xcc.test';
const QUERIES = 400;

interface Comparable {
  rcode: string | undefined;
  flags: string[];
  questions: string[];
  answers: string[];
  authorities: string[];
  additionals: string[];
  opt: string | undefined;
}

/** A response in a form where equal means equal to a resolver: RRs sorted within each section. */
function comparable(raw: Buffer): Comparable {
  const p = dnsPacket.decode(raw);
  const flags = (['aa', 'tc', 'rd', 'ra', 'ad', 'cd'] as const).filter(
    (f) => (p as unknown as Record<string, unknown>)[`flag_${f}`],
  );
  const rr = (a: dnsPacket.Answer) =>
    `${a.name} ${'ttl' in a ? a.ttl : ''} ${a.type} ${JSON.stringify((a as { data?: unknown }).data)}`;
  const opt = (p.additionals ?? []).find((a) => a.type === 'OPT') as
    { udpPayloadSize?: number; flags?: number } | undefined;
  return {
    rcode: (p as { rcode?: string }).rcode,
    flags,
    questions: (p.questions ?? []).map((q) => `${q.name} ${q.type} ${q.class}`),
    answers: (p.answers ?? []).map(rr).sort(),
    authorities: (p.authorities ?? []).map(rr).sort(),
    additionals: (p.additionals ?? [])
      .filter((a) => a.type !== 'OPT')
      .map(rr)
      .sort(),
    // Options (NSD adds extended errors, RFC 8914) are not compared; presence, size and DO are.
    opt: opt ? `udp=${opt.udpPayloadSize} flags=${opt.flags}` : undefined,
  };
}

function encode(q: GeneratedQuery, id: number): Buffer {
  return dnsPacket.encode({
    type: 'query',
    id,
    flags: 0,
    questions: [{ name: q.name, type: q.type as dnsPacket.RecordType, class: 'IN' }],
    additionals: q.edns
      ? [{ type: 'OPT', name: '.', udpPayloadSize: q.edns, flags: 0 } as dnsPacket.Answer]
      : [],
  });
}

// Both UDP paths (dns-server/serve/native-udp.ts and dgram) must answer byte for byte alike.
describe.each(['native', 'dgram'] as const)(
  'dns-server (UDP through %s) against NSD on one generated zone',
  (udpIo) => {
    let dir: string;
    let ours: DnsProcess;
    let nsd: DnsProcess;
    const zone = generateZone({ hosts: 300, gateways: 40 }, ZONE);

    beforeAll(async () => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-differential-'));
      const file = path.join(dir, 'records.yaml');
      writeFileSync(
        file,
        asRecordSets(zone.records, 100)
          .map((s) => stringify(s))
          .join('---\n'),
      );
      ours = await startDnsServer(['--zone', ZONE, '--records-file', file, '--udp-io', udpIo], {
        health: true,
      });
      // The native path is the one under test, not a silent fallback to dgram.
      expect(ours.logs()).not.toMatch(/batched native module is not usable/);
      await eventually(async () => {
        const res = await fetch(`http://127.0.0.1:${ours.healthPort}/readyz`);
        if (res.status !== 200) throw new Error(`readyz ${res.status}`);
      });
      // NSD gets our SOA serial, so the SOA records compare equal.
      const soa = dnsPacket.decode(await exchange(ours.port, encode({ name: ZONE, type: 'SOA' }, 1), 'udp'));
      const serial = (soa.answers?.[0] as { data: { serial: number } }).data.serial;
      nsd = await startNsd(
        ZONE,
        zoneFile(zone, {
          mname: `ns1.${ZONE}`,
          rname: `hostmaster.${ZONE}`,
          serial,
          refresh: 3600,
          retry: 600,
          expire: 86400,
          minimum: 30,
          ttl: 30,
        }),
      );
    }, 60_000);
    afterAll(async () => {
      await ours?.stop();
      await nsd?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it(`gives the same responses as NSD for ${QUERIES} generated queries`, async () => {
      const queries = generateQueries(zone, QUERIES);
      const differences: string[] = [];
      let truncated = 0;
      let nxdomain = 0;
      let wildcard = 0;
      let answered = 0;
      for (const [i, q] of queries.entries()) {
        const msg = encode(q, i + 1);
        const transport = q.tcp ? 'tcp' : 'udp';
        const [a, b] = await Promise.all([
          exchange(ours.port, msg, transport),
          exchange(nsd.port, msg, transport),
        ]);
        const mine = comparable(a);
        const theirs = comparable(b);
        if (JSON.stringify(mine) !== JSON.stringify(theirs))
          differences.push(
            `${q.name} ${q.type} edns=${q.edns} tcp=${q.tcp}\n  ours: ${JSON.stringify(mine)}\n  nsd:  ${JSON.stringify(theirs)}`,
          );
        if (mine.flags.includes('tc')) truncated++;
        if (mine.rcode === 'NXDOMAIN') nxdomain++;
        if (mine.answers.length > 0) answered++;
        if (/^[^.]+(\.[^.]+)*\.gateway\./i.test(q.name)) wildcard++;
      }
      expect(differences.slice(0, 5)).toEqual([]);
      // The generated queries did reach the corners they are meant to.
      expect(truncated).toBeGreaterThan(0);
      expect(answered).toBeGreaterThan(QUERIES / 4);
      process.stderr.write(
        `differential: ${queries.length} queries, ${answered} with answers, ${nxdomain} NXDOMAIN, ${truncated} truncated, ${wildcard} wildcard\n`,
      );
      expect(nxdomain).toBeGreaterThan(10);
      expect(wildcard).toBeGreaterThan(10);
    });

    it('answers ANY with every RRset at the name, where NSD answers with one (RFC 8482)', async () => {
      const msg = encode({ name: ZONE, type: 'ANY' }, 9);
      const mine = dnsPacket.decode(await exchange(ours.port, msg, 'udp'));
      expect(mine.answers?.map((a) => a.type).sort()).toEqual(['NS', 'SOA']);
    });
  },
);
