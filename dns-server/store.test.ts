import { silentLogger } from './log.js';
import { Metrics } from './metrics.js';
import { RecordStore } from './store.js';
import { recordSet, sourced, zoneConfig } from './zone/testing.js';
import type { Zone } from './zone/zone.js';

describe('RecordStore', () => {
  function store() {
    const loads: Zone[][] = [];
    let now = 1_000_000_000_000;
    const s = new RecordStore([zoneConfig()], (z) => loads.push(z), new Metrics(), silentLogger, {
      debounceMs: 10_000,
      now: () => now,
    });
    return { s, loads, tick: (ms: number) => (now += ms) };
  }
  const serialOf = (zones: Zone[]) => {
    const soa = zones[0]!.soa.data[0]!;
    return soa.kind === 'soa' ? soa.serial : -1;
  };

  it('is ready only after a rebuild that includes every expected source', () => {
    const { s } = store();
    s.expect('file');
    s.expect('kubernetes');
    s.rebuild();
    expect(s.ready).toBe(false);
    s.replace('file', []);
    expect(s.ready).toBe(false); // delivered, not yet built
    s.rebuild();
    expect(s.ready).toBe(false);
    s.replace('kubernetes', []);
    s.rebuild();
    expect(s.ready).toBe(true);
    s.stop();
  });

  it('bumps the SOA serial when, and only when, the data changes', () => {
    const { s, loads, tick } = store();
    s.rebuild();
    const first = serialOf(loads[0]!);
    expect(first).toBe(1_000_000_000);
    s.replace('file', sourced(recordSet('a', [{ name: 'a.xcc.test', type: 'A', values: ['10.0.0.1'] }])));
    s.rebuild();
    expect(serialOf(loads[1]!)).toBe(first + 1); // same second: previous + 1
    s.replace('file', sourced(recordSet('b', [{ name: 'A.xcc.test.', type: 'A', values: ['10.0.0.1'] }])));
    s.rebuild();
    expect(loads).toHaveLength(2); // same data, other object: nothing reloaded
    tick(60_000);
    s.replace('file', []);
    s.rebuild();
    expect(serialOf(loads[2]!)).toBe(1_000_000_060);
    s.stop();
  });
});
