// The responder alone, two builds side by side: what a change to the hot
// path's JS (parse, lookup, copy) costs per query, without sockets, so that a
// neighbour's load on a shared machine moves it little (CPU time of this
// thread, not wall time). Both builds answer dns-bench's zone and queries
// (the same mix of names, wildcard synthesis, NXDOMAIN and NODATA, mixed
// case), A, B, B, A, ... in one process, and the answers are checked to be
// byte for byte the same.
//
//   npm run build && node dist/bench/dns-responder.js --a dist/ab/before [--b dist] [--records 100000] [--rounds 6]
// (a copy of dist must stay inside the repository, so that it finds node_modules)
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import dnsPacket from 'dns-packet';
import { asRecordSets } from '../test/support/dnszone.js';
import { loadAverage, machine, writeWorkload, ZONE } from './dns-load.js';

interface Build {
  name: string;
  respond(msg: Buffer): Buffer | undefined;
}

/** The zone as the dns-server builds it, in `dist`'s code: compile, encode, load. */
async function loadBuild(dist: string, sets: ReturnType<typeof asRecordSets>): Promise<Build> {
  const url = (p: string) => pathToFileURL(path.resolve(dist, p)).href;
  const { compileZones } = (await import(
    url('dns-server/zone/compile.js')
  )) as typeof import('../dns-server/zone/compile.js');
  const { Responder } = (await import(
    url('dns-server/wire/responder.js')
  )) as typeof import('../dns-server/wire/responder.js');
  const config = {
    name: ZONE,
    mname: `ns1.${ZONE}`,
    rname: `hostmaster.${ZONE}`,
    nameServers: [`ns1.${ZONE}`],
    ttl: 30,
    refresh: 3600,
    retry: 600,
    expire: 86400,
    minimum: 10,
  };
  const built = compileZones(
    sets.map((set) => ({ source: `bench:${set.metadata.name}`, set })),
    [config],
    1,
  );
  const responder = new Responder({ maxUdpSize: 1232 });
  responder.load(built.zones);
  // As on the batched UDP path: the answer is written into a slot of the output ring.
  const slot = Buffer.alloc(1232);
  return {
    name: dist,
    respond: (msg) => {
      const out = responder.respond(msg, 'udp', slot);
      return out.response?.subarray(0, out.length);
    },
  };
}

/** CPU nanoseconds of this process per query over every query once. */
function timeOnce(build: Build, queries: Buffer[]): number {
  const began = process.cpuUsage();
  for (const q of queries) build.respond(q);
  const used = process.cpuUsage(began);
  return ((used.user + used.system) * 1000) / queries.length;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      a: { type: 'string' },
      b: { type: 'string', default: 'dist' },
      records: { type: 'string', default: '100000' },
      rounds: { type: 'string', default: '6' },
    },
  });
  if (!values.a) throw new Error('--a DIST is required (the build to compare with)');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-responder-'));
  try {
    const load = writeWorkload(dir, Number(values.records));
    const sets = asRecordSets(load.zone.records, 500);
    const queries = readFileSync(load.queryFile, 'utf8')
      .trim()
      .split('\n')
      .map((line, i) => {
        const [name, type] = line.split(' ');
        return dnsPacket.encode({
          type: 'query',
          id: i & 0xffff,
          flags: dnsPacket.RECURSION_DESIRED,
          questions: [{ name: name!, type: type as dnsPacket.RecordType, class: 'IN' }],
        });
      });
    const builds = [await loadBuild(values.a, sets), await loadBuild(values.b, sets)] as const;
    // Same answers, byte for byte, but for the weighted draws (none in this zone).
    for (const q of queries) {
      const [a, b] = builds.map((x) => Buffer.from(x.respond(q) ?? []));
      if (a!.length === 0 || !a!.equals(b!))
        throw new Error(
          `the builds answer ${q.toString('hex')} differently:\n${a?.toString('hex')}\n${b?.toString('hex')}`,
        );
    }
    process.stdout.write(
      `${machine()}\nzone: ${load.records} records, ${queries.length} queries; A = ${values.a}, B = ${values.b}\n`,
    );
    for (const b of builds) timeOnce(b, queries); // warm-up, optimised code
    const ns: [number[], number[]] = [[], []];
    for (let round = 1; round <= Number(values.rounds); round++) {
      const order = round % 2 ? [0, 1] : [1, 0];
      for (const i of order) ns[i as 0 | 1].push(timeOnce(builds[i as 0 | 1], queries));
      process.stdout.write(
        `round ${round}: A ${ns[0].at(-1)!.toFixed(0)} ns/query, B ${ns[1].at(-1)!.toFixed(0)} ns/query (${loadAverage()})\n`,
      );
    }
    const ratios = ns[1].map((b, i) => b / ns[0][i]!).sort((x, y) => x - y);
    const median =
      (ratios[Math.floor((ratios.length - 1) / 2)]! + ratios[Math.ceil((ratios.length - 1) / 2)]!) / 2;
    const range = (xs: number[]) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
    process.stdout.write(
      `A ${range(ns[0])} ns/query, B ${range(ns[1])} ns/query; B/A ${ratios[0]!.toFixed(2)}–${ratios.at(-1)!.toFixed(2)}, median ${median.toFixed(2)}\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
