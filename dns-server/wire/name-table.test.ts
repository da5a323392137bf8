// The name table against the zone's own lookup (zone.ts, closestMatch over
// name strings): for names that exist, names below them (wildcard synthesis,
// NXDOMAIN), empty non-terminals, mixed case and labels holding "." or 0
// octets, both must find the same node.
import { generateZone, asRecordSets, prng } from '../../test/support/dnszone.js';
import { compileZones } from '../zone/compile.js';
import { exampleZones, sourced, zoneConfig } from '../zone/fixtures.test-support.js';
import type { Zone } from '../zone/zone.js';
import { buildNameTable, NameTable } from './name-table.js';
import { parseQuery, PARSED } from './query.js';

/** A query for the name given as raw labels (so that a label may hold "." or any octet). */
function queryFor(labels: Buffer[]): Buffer {
  const name = Buffer.concat([...labels.flatMap((l) => [Buffer.of(l.length), l]), Buffer.of(0)]);
  const header = Buffer.from('123401000001000000000000', 'hex'); // ID, RD, one question
  return Buffer.concat([header, name, Buffer.from('00010001', 'hex')]);
}

/** What the zone's lookup says answers the labels: the node's name, or undefined for NXDOMAIN. */
function expected(zone: Zone, labels: Buffer[]): string | undefined {
  // As query.ts writes the name for the zone: lower case, "." inside a label as a 0 octet.
  const qname = labels
    .map((l) =>
      [...l].map((c) => String.fromCharCode(c === 0x2e ? 0 : c >= 0x41 && c <= 0x5a ? c | 0x20 : c)).join(''),
    )
    .join('.');
  const match = zone.find(qname);
  return match.kind === 'nxdomain' ? undefined : match.node.name;
}

function found(zone: Zone, table: NameTable, names: string[], labels: Buffer[]): string | undefined {
  const q = parseQuery(queryFor(labels));
  if (q.status !== PARSED) throw new Error(`query for ${labels.join('.')} did not parse`);
  const apexLabels = zone.name.split('.').length;
  const index = table.closestMatch(q.name, q.qnameLength, q.labelStarts, q.labelCount, apexLabels);
  return index < 0 ? undefined : names[index];
}

function check(zone: Zone, queries: Buffer[][]): void {
  const names = [...zone.nodes.keys()];
  const table = new NameTable(buildNameTable(names));
  const wrong: string[] = [];
  for (const labels of queries) {
    const want = expected(zone, labels);
    const got = found(zone, table, names, labels);
    if (got !== want)
      wrong.push(`${labels.map((l) => JSON.stringify(l.toString('latin1'))).join('.')}: ${got} ≠ ${want}`);
  }
  expect(wrong.slice(0, 10)).toEqual([]);
}

const split = (name: string): Buffer[] => name.split('.').map((l) => Buffer.from(l, 'latin1'));

/** Each name of the zone, and names below and beside it, some with mixed case or odd octets. */
function queriesAround(zone: Zone, seed: number): Buffer[][] {
  const rnd = prng(seed);
  const out: Buffer[][] = [];
  const odd = [Buffer.from('x.y'), Buffer.of(0), Buffer.from('*'), Buffer.from('A'), Buffer.of(0x2e)];
  for (const name of zone.nodes.keys()) {
    const labels = split(name);
    out.push(labels);
    out.push(labels.map((l) => Buffer.from(l.toString('latin1').toUpperCase(), 'latin1')));
    out.push([Buffer.from(`x${Math.floor(rnd() * 1000)}`), ...labels]);
    out.push([Buffer.from('a'), Buffer.from('B'), ...labels]);
    out.push([odd[Math.floor(rnd() * odd.length)]!, ...labels]);
    // The first label changed by one octet: a near miss (below the apex: the zone's lookup takes
    // names inside the zone only).
    if (name !== zone.name) {
      const first = Buffer.from(labels[0]!);
      first[first.length - 1] = first.at(-1)! ^ 1;
      out.push([first, ...labels.slice(1)]);
    }
  }
  return out;
}

describe('NameTable', () => {
  it('finds what the zone lookup finds, in the zone of the lookup table', () => {
    const zone = exampleZones().zones[0]!;
    check(zone, queriesAround(zone, 1));
  });

  it('finds what the zone lookup finds, in a generated zone of 5,000 names (wildcards, an apex wildcard)', () => {
    const generated = generateZone({ hosts: 4000, gateways: 300 }, 'xcc.test');
    const built = compileZones(sourced(...asRecordSets(generated.records, 500)), [zoneConfig()], 1);
    const zone = built.zones[0]!;
    expect(zone.nodes.size).toBeGreaterThan(5000);
    check(zone, queriesAround(zone, 2));
  });

  it('takes names up to the longest query.ts parses (255 octets before the final 0)', () => {
    const zone = exampleZones().zones[0]!;
    const apex = split(zone.name); // 10 octets on the wire
    const short = Array.from({ length: 122 }, () => Buffer.from('a')); // 244 octets
    const long = Array.from({ length: 3 }, () => Buffer.alloc(63, 'b'));
    check(zone, [
      [...short, ...apex],
      [Buffer.from('a'), ...short, ...apex], // 255 octets before the final 0
      [...long, ...apex],
    ]);
  });
});
