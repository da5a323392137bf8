// What a V8 heap snapshot (node --heapsnapshot-signal) holds, by constructor:
// the retained picture of a process at rest, which its resident memory
// (garbage not yet collected, the allocator's high-water mark) does not give.
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

export interface HeapSummary {
  totalMb: number;
  /** The largest groups, by self size: "type name", MB, count. */
  top: { what: string; mb: number; count: number }[];
}

export function summarizeHeapSnapshot(file: string, top = 12): HeapSummary {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const groups = new Map<string, { size: number; count: number }>();
  let total = 0;
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt]!] ?? '?';
    // Strings and code are grouped by their type alone: their "names" are their contents.
    const name = type === 'object' || type === 'closure' ? snap.strings[snap.nodes[i + nameAt]!] : '';
    const size = snap.nodes[i + sizeAt]!;
    total += size;
    const key = `${type}${name ? ` ${name}` : ''}`;
    const g = groups.get(key) ?? { size: 0, count: 0 };
    g.size += size;
    g.count++;
    groups.set(key, g);
  }
  return {
    totalMb: total / 2 ** 20,
    top: [...groups]
      .sort((a, b) => b[1].size - a[1].size)
      .slice(0, top)
      .map(([what, g]) => ({ what, mb: g.size / 2 ** 20, count: g.count })),
  };
}
