// Benchmark: what signing costs (ADR 0106), in one run, interleaved.
//
// 1. Compile: one build of the generated zone (build/run.ts, as the build thread runs it) in a
//    fresh process each, unsigned and signed in turn, `--runs` times: wall time and the peak
//    resident memory; then the next build after one record changed (a new serial), with what the
//    build thread keeps between builds (parsed documents and sets, signatures): what a change
//    costs, unsigned and signed.
// 2. Answers: dnsperf saturating, in turns: NSD serving the same records signed with the same key
//    (the reference) with DO=1 and DO=0, our signed server with DO=1 and DO=0, our server without a
//    key (DO=0: what the issue's target is measured against); qps, and each server's share of a
//    core. Then the same sides at one offered rate (60 % of the lowest qps): each server's CPU per
//    answer, user and system (/proc), what compares the servers when the client is the limit.
//    Last, the saturating rounds again with each server capped at `--cap` of one core (a cgroup,
//    cpu-cap.ts): the server, not dnsperf, is then the limit, and its qps is its own.
// 3. Sizes: the first 20,000 queries of the query file answered in process with DO=1 and DO=0:
//    mean and largest response, and how many would be truncated (TC, then TCP) at 1232 and 512.
//
//   npm run bench:dnssec -- [--records 20000] [--seconds 5] [--runs 2] [--cap 0.5] [--compile-only]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import dnsPacket from 'dns-packet';
import { stringify } from 'yaml';
import { startNsd, type DnsProcess } from '../test/support/dns.js';
import { asRecordSets } from '../test/support/dnszone.js';
import { generateKeyPem, parseKey } from '../dns-server/dnssec/key.js';
import { SignatureCache } from '../dns-server/dnssec/rrsig.js';
import { SignedZone } from '../dns-server/dnssec/signed-zone.js';
import { treeCpu } from './proc.js';
import { CpuCap } from './cpu-cap.js';
import { zoneFileOf } from '../dns-server/dnssec/zone-file.js';
import { runBuild } from '../dns-server/build/run.js';
import { Responder } from '../dns-server/wire/responder.js';
import { compileZones, ParseCache, type ZoneConfig } from '../dns-server/zone/compile.js';
import { ParsedDocuments } from '../dns-server/sources/records-file.js';
import {
  dnsperf,
  loadAverage,
  machine,
  startBuild,
  writeWorkload,
  ZONE,
  type ServerProcess,
} from './dns-load.js';

const CONFIG: ZoneConfig = {
  name: ZONE,
  mname: `ns1.${ZONE}`,
  rname: `hostmaster.${ZONE}`,
  nameServers: [`ns1.${ZONE}`],
  ttl: 30,
  refresh: 3600,
  retry: 600,
  expire: 86400,
  minimum: 30,
};

interface CompileFigures {
  ms: number;
  peakRssMb: number;
  signatures: number;
  /** The next build after one record changed, what the build thread keeps kept. */
  nextMs: number;
  nextSignatures: number;
}

/** Child mode: one build and the next, figures as JSON on stdout. */
function compileChild(recordsFile: string, keyFile: string | undefined): void {
  const yaml = readFileSync(recordsFile, 'utf8');
  const keys = keyFile ? [{ zone: ZONE, pem: readFileSync(keyFile, 'utf8') }] : undefined;
  // As build/worker.ts keeps them between builds.
  const cache = new ParseCache();
  const signatures = new SignatureCache();
  const documents = new ParsedDocuments();
  let serial = 1;
  const build = (text: string) => {
    const began = performance.now();
    const reply = runBuild(
      {
        inputs: [{ source: `file:${recordsFile}`, yaml: text }],
        zones: [CONFIG],
        serial: serial++,
        previousFingerprint: '',
        unhealthy: [],
        ...(keys ? { keys } : {}),
      },
      cache,
      signatures,
      documents,
    );
    if (!reply.served) throw new Error(`build failed: ${JSON.stringify(reply.broken)}`);
    return performance.now() - began;
  };
  const ms = build(yaml);
  const peakRssMb = process.resourceUsage().maxRSS / 1024;
  const made = signatures.made;
  const changed = stringify(asRecordSets([{ name: `changed.${ZONE}`, type: 'A', values: ['10.9.9.9'] }])[0]);
  const nextMs = build(`${yaml}---\n${changed}`);
  const out: CompileFigures = { ms, peakRssMb, signatures: made, nextMs, nextSignatures: signatures.made };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

function compileIn(recordsFile: string, keyFile: string | undefined): CompileFigures {
  const r = spawnSync(
    process.execPath,
    [import.meta.filename, '--compile-child', recordsFile, ...(keyFile ? ['--key', keyFile] : [])],
    { encoding: 'utf8', maxBuffer: 1 << 20 },
  );
  if (r.status !== 0) throw new Error(`compile child failed (${r.status}):\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as CompileFigures;
}

function sizes(records: Parameters<typeof asRecordSets>[0], queryFile: string, pem: string): string[] {
  const zones = compileZones(
    asRecordSets(records).map((set) => ({ source: 'bench', set })),
    [CONFIG],
    1,
  ).zones;
  const r = new Responder({ maxUdpSize: 65535 });
  r.load(zones, {
    keys: new Map([[ZONE, parseKey(pem)]]),
    signatures: new SignatureCache(),
    now: Math.floor(Date.now() / 1000),
  });
  const queries = readFileSync(queryFile, 'utf8').trim().split('\n').slice(0, 20_000);
  const out: string[] = [];
  for (const dnssecOk of [false, true]) {
    let total = 0;
    let largest = 0;
    let over1232 = 0;
    let over512 = 0;
    for (const [i, line] of queries.entries()) {
      const [name, type] = line.split(' ');
      const msg = dnsPacket.encode({
        type: 'query',
        id: i,
        questions: [{ name: name!, type: type as dnsPacket.RecordType, class: 'IN' }],
        additionals: [
          {
            type: 'OPT',
            name: '.',
            udpPayloadSize: 65535,
            flags: dnssecOk ? dnsPacket.DNSSEC_OK : 0,
          } as dnsPacket.Answer,
        ],
      });
      const n = r.respond(msg, 'tcp').length;
      total += n;
      largest = Math.max(largest, n);
      if (n > 1232) over1232++;
      if (n > 512) over512++;
    }
    out.push(
      `  DO=${dnssecOk ? 1 : 0}: mean ${(total / queries.length).toFixed(0)} octets, largest ${largest}; ` +
        `truncated (TC, then TCP) at 1232: ${((100 * over1232) / queries.length).toFixed(2)} %, at 512: ${((100 * over512) / queries.length).toFixed(2)} %`,
    );
  }
  return out;
}

/** A process's memory on transparent huge pages, in MB, as its smaps_rollup says. */
function hugePagesMb(pid: number): string {
  try {
    const kb = /AnonHugePages:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1];
    return kb === undefined ? 'unknown' : `${(Number(kb) / 1024).toFixed(0)} MB`;
  } catch (err) {
    return `unknown (${(err as Error).message})`;
  }
}

/** The setting in force, the bracketed one of /sys/kernel/mm/transparent_hugepage/enabled. */
function transparentHugePages(): string {
  try {
    return (
      /\[(\w+)\]/.exec(readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8'))?.[1] ?? 'unknown'
    );
  } catch {
    return 'not available';
  }
}

const spread = (xs: number[]) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      records: { type: 'string', default: '20000' },
      seconds: { type: 'string', default: '5' },
      runs: { type: 'string', default: '2' },
      'compile-child': { type: 'string' },
      key: { type: 'string' },
      'compile-only': { type: 'boolean', default: false },
      cap: { type: 'string', default: '0.5' },
    },
  });
  if (values['compile-child']) return compileChild(values['compile-child'], values.key);
  const runs = Number(values.runs);
  const seconds = Number(values.seconds);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-bench-dnssec-'));
  const processes: (ServerProcess | DnsProcess)[] = [];
  const caps: CpuCap[] = [];
  try {
    console.log(machine());
    const load = writeWorkload(dir, Number(values.records));
    const pem = generateKeyPem();
    const keyFile = path.join(dir, 'key.pem');
    writeFileSync(keyFile, pem);
    console.log(`zone: ${load.records} records; ${runs} interleaved runs per side; ${loadAverage()}`);

    const unsigned: CompileFigures[] = [];
    const signed: CompileFigures[] = [];
    for (let run = 0; run < runs; run++) {
      unsigned.push(compileIn(load.recordsFile, undefined));
      signed.push(compileIn(load.recordsFile, keyFile));
    }
    console.log('compile (one build in a fresh process; runs, then min–max):');
    console.log(
      `  unsigned: ${unsigned.map((c) => `${c.ms.toFixed(0)} ms, peak RSS ${c.peakRssMb.toFixed(0)} MB`).join('; ')}`,
    );
    console.log(
      `  signed:   ${signed.map((c) => `${c.ms.toFixed(0)} ms, peak RSS ${c.peakRssMb.toFixed(0)} MB, ${c.signatures} signatures`).join('; ')}`,
    );
    console.log(
      `  unsigned, next build after one record changed: ${unsigned.map((c) => `${c.nextMs.toFixed(0)} ms`).join('; ')} (${spread(unsigned.map((c) => c.nextMs))})`,
    );
    console.log(
      `  signed, next build after one record changed: ${signed.map((c) => `${c.nextMs.toFixed(0)} ms, ${c.nextSignatures} signatures made`).join('; ')} (${spread(signed.map((c) => c.nextMs))})`,
    );
    console.log(`  ${loadAverage()}`);
    if (values['compile-only']) return;

    // NSD gets the same records signed with the same key (its own signatures: same sizes and work).
    const built = compileZones(
      asRecordSets(load.zone.records).map((set) => ({ source: 'bench', set })),
      [CONFIG],
      1,
    );
    const signedZone = new SignedZone(
      built.zones[0]!,
      parseKey(pem),
      new SignatureCache(),
      Math.floor(Date.now() / 1000),
    );
    const nsd = await startNsd(ZONE, zoneFileOf(ZONE, signedZone.records()));
    processes.push(nsd);
    const oursSigned = await startBuild(path.join(import.meta.dirname, '..'), load.recordsFile, {
      args: ['--dnssec-key', `${ZONE}=${keyFile}`],
    });
    processes.push(oursSigned);
    const oursPlain = await startBuild(path.join(import.meta.dirname, '..'), load.recordsFile);
    processes.push(oursPlain);
    // DO=1 queries carry EDNS; DO=0 is asked both ways, with EDNS (as resolvers ask since DNS Flag
    // Day 2020) and without (the reference the issue names, "our unsigned qps").
    const side = (label: string, p: ServerProcess | DnsProcess, dnssecOk: boolean, edns?: boolean) => ({
      label,
      port: p.port,
      pid: p.child.pid!,
      dnssecOk,
      ...(edns ? { edns } : {}),
    });
    const sides = [
      side('NSD signed, DO=1', nsd, true),
      side('dns-server signed, DO=1', oursSigned, true),
      side('dns-server signed, DO=0', oursSigned, false),
      side('dns-server unsigned, DO=0', oursPlain, false),
      side('dns-server unsigned, EDNS DO=0', oursPlain, false, true),
      side('NSD signed, DO=0', nsd, false),
      side('NSD signed, EDNS DO=0', nsd, false, true),
    ];
    for (const s of sides) await dnsperf(s.port, load.queryFile, 1, s); // warm-up
    // The answer arena goes on memory advised for huge pages when it is large (dns-server
    // wire/arena-memory.ts); what the kernel gave shows here.
    console.log(
      `huge pages (AnonHugePages, /proc/<pid>/smaps_rollup): our signed ${hugePagesMb(oursSigned.child.pid!)}, our unsigned ${hugePagesMb(oursPlain.child.pid!)}; THP ${transparentHugePages()}`,
    );
    const qps = await saturating(
      sides,
      load.queryFile,
      seconds,
      runs,
      `answers (dnsperf ${seconds} s, 200 outstanding, saturating`,
    );

    // A server below a whole core is not what limits the qps above: one dnsperf thread is, on 2
    // cores. What a server spends per answer compares their cost, at one offered rate for all, so
    // that every side is read in batches of the same sizes (a faster side is otherwise woken for
    // fewer queries at a time, and pays more per answer).
    const rate = Math.round(Math.min(...[...qps.values()].flat()) * 0.6);
    const perAnswer = new Map<string, { user: number; system: number }[]>(sides.map((s) => [s.label, []]));
    const fixedLoads: string[] = [];
    for (let run = 0; run < runs; run++) {
      for (const s of sides) {
        const before = treeCpu(s.pid);
        const r = await dnsperf(s.port, load.queryFile, seconds, { ...s, qps: rate });
        const after = treeCpu(s.pid);
        perAnswer.get(s.label)!.push({
          user: ((after.user - before.user) / r.completed) * 1e6,
          system: ((after.system - before.system) / r.completed) * 1e6,
        });
      }
      fixedLoads.push(loadAverage());
    }
    const total = (c: { user: number; system: number }) => c.user + c.system;
    const plainCpu = perAnswer.get('dns-server unsigned, DO=0')!;
    const plainEdnsCpu = perAnswer.get('dns-server unsigned, EDNS DO=0')!;
    console.log(
      `server CPU per answer at ${rate} queries a second offered to each side, µs (its processes and threads; runs as user + system, × our unsigned's of the same round, without and with EDNS):`,
    );
    for (const [label, xs] of perAnswer)
      console.log(
        `  ${label.padEnd(31)} ${xs.map((c) => `${c.user.toFixed(2)} + ${c.system.toFixed(2)}`).join(', ')}; × unsigned ${xs.map((c, i) => (total(c) / total(plainCpu[i]!)).toFixed(2)).join(', ')}; × unsigned with EDNS ${xs.map((c, i) => (total(c) / total(plainEdnsCpu[i]!)).toFixed(2)).join(', ')}`,
      );
    console.log(`  ${fixedLoads.join('; ')}`);
    const cap = Number(values.cap);
    if (cap > 0) await capped(sides, cap, caps, load.queryFile, seconds, runs);
    console.log('answer sizes (first 20,000 queries of the query file, in process):');
    for (const line of sizes(load.zone.records, load.queryFile, pem)) console.log(line);
  } finally {
    for (const p of processes.reverse()) await p.stop();
    for (const c of caps) c.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Side {
  label: string;
  port: number;
  pid: number;
  dnssecOk: boolean;
  edns?: boolean;
}

/**
 * The saturating rounds with every server under a cap of `share` of one core: each server's own
 * qps, the client no longer the limit. Caps stay until the servers stop (`caps` is removed then).
 */
async function capped(
  sides: Side[],
  share: number,
  caps: CpuCap[],
  queryFile: string,
  seconds: number,
  runs: number,
): Promise<void> {
  for (const pid of new Set(sides.map((s) => s.pid))) {
    const cap = CpuCap.create(String(pid), share);
    if (cap instanceof Error) {
      console.log(`server-bound rounds skipped: ${cap.message}`);
      return;
    }
    caps.push(cap);
    cap.add(pid);
  }
  await saturating(
    sides,
    queryFile,
    seconds,
    runs,
    `answers with each server capped at ${share} of a core (dnsperf ${seconds} s, saturating`,
  );
}

/**
 * dnsperf saturating each side in turn, `runs` rounds; prints each side's qps, its ratio to our
 * unsigned server's in the same round (without and with EDNS) and the server's share of a core.
 * @returns the qps by side
 */
async function saturating(
  sides: Side[],
  queryFile: string,
  seconds: number,
  runs: number,
  title: string,
): Promise<Map<string, number[]>> {
  const qps = new Map<string, number[]>(sides.map((s) => [s.label, []]));
  const shares = new Map<string, number[]>(sides.map((s) => [s.label, []]));
  const loads: string[] = [];
  for (let run = 0; run < runs; run++) {
    for (const s of sides) {
      const before = treeCpu(s.pid);
      const r = await dnsperf(s.port, queryFile, seconds, s);
      qps.get(s.label)!.push(r.qps);
      // Over the sending time: dnsperf then waits up to 5 s for answers it counts as lost, the server idle.
      shares.get(s.label)!.push((treeCpu(s.pid).total - before.total) / seconds);
    }
    loads.push(loadAverage());
  }
  const plain = qps.get('dns-server unsigned, DO=0')!;
  const plainEdns = qps.get('dns-server unsigned, EDNS DO=0')!;
  console.log(
    `${title}; runs, min–max, × our unsigned of the same round, without and with EDNS; the server's share of one core):`,
  );
  for (const [label, xs] of qps)
    console.log(
      `  ${label.padEnd(31)} ${xs.map((q) => q.toFixed(0)).join(', ')} (${spread(xs)}); × unsigned ${xs.map((q, i) => (q / plain[i]!).toFixed(2)).join(', ')}; × unsigned with EDNS ${xs.map((q, i) => (q / plainEdns[i]!).toFixed(2)).join(', ')}; core ${shares
        .get(label)!
        .map((c) => `${(c * 100).toFixed(0)} %`)
        .join(', ')}`,
    );
  console.log(`  ${loads.join('; ')}`);
  return qps;
}

await main();
