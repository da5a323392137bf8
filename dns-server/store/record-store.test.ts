import { inProcessBuilder } from '../build/builder.js';
import { silentLogger } from '../../runtime/log.js';
import { Metrics } from '../serve/metrics.js';
import { RecordStore } from './record-store.js';
import { recordSet, sourced, zoneConfig } from '../zone/fixtures.test-support.js';

describe('RecordStore', () => {
  function store() {
    const loads: number[] = [];
    let now = 1_000_000_000_000;
    const s = new RecordStore([zoneConfig()], (_, serial) => loads.push(serial), new Metrics(), log, {
      debounceMs: 10_000,
      builder: inProcessBuilder(),
      now: () => now,
    });
    return { s, loads, tick: (ms: number) => (now += ms) };
  }
  const serialOf = (serial: number) => serial;
  const logged: string[] = [];
  const log = { ...silentLogger, error: (msg: string) => void logged.push(msg) };

  it('signs with the last good key when a new one is refused, and builds once more, not in a loop', async () => {
    const { generateKeyPem, parseKey } = await import('../dnssec/key.js');
    const metrics = new Metrics();
    const s = new RecordStore([zoneConfig()], () => undefined, metrics, log, {
      debounceMs: 0,
      builder: inProcessBuilder(),
    });
    const pem = generateKeyPem();
    s.setKeys('files', [{ zone: 'xcc.test', pem }]);
    await s.rebuild();
    expect(metrics.dnssec.get('xcc.test')?.keyTag).toBe(parseKey(pem).keyTag);
    const builds = metrics.reloads;
    const errors = metrics.reloadErrors;
    s.setKeys('files', [{ zone: 'xcc.test', pem: 'not a key' }]);
    await s.rebuild();
    await new Promise((r) => setTimeout(r, 200)); // the build after the refusal, and nothing more
    expect(metrics.reloadErrors).toBe(errors + 1);
    expect(metrics.reloads).toBe(builds);
    expect(metrics.dnssec.get('xcc.test')?.keyTag).toBe(parseKey(pem).keyTag);
    expect(logged).toContain('DNSSEC key refused; the zone stays served as it was');
    s.stop();
  });

  it('is ready only after a rebuild that includes every expected source', async () => {
    const { s } = store();
    s.expect('file');
    s.expect('kubernetes');
    await s.rebuild();
    expect(s.ready()).toBe(false);
    s.replace('file', []);
    expect(s.ready()).toBe(false); // delivered, not yet built
    await s.rebuild();
    expect(s.ready()).toBe(false);
    s.replace('kubernetes', []);
    await s.rebuild();
    expect(s.ready()).toBe(true);
    s.stop();
  });

  it('bumps the SOA serial when, and only when, the data changes', async () => {
    const { s, loads, tick } = store();
    await s.rebuild();
    const first = serialOf(loads[0]!);
    expect(first).toBe(1_000_000_000);
    s.replace('file', sourced(recordSet('a', [{ name: 'a.xcc.test', type: 'A', values: ['10.0.0.1'] }])));
    await s.rebuild();
    expect(serialOf(loads[1]!)).toBe(first + 1); // same second: previous + 1
    s.replace('file', sourced(recordSet('b', [{ name: 'A.xcc.test.', type: 'A', values: ['10.0.0.1'] }])));
    await s.rebuild();
    expect(loads).toHaveLength(2); // same data, other object: nothing reloaded
    tick(60_000);
    s.replace('file', []);
    await s.rebuild();
    expect(serialOf(loads[2]!)).toBe(1_000_000_060);
    s.stop();
  });

  it('parses records files in the build, and keeps the last good text when one breaks', async () => {
    const { s, loads } = store();
    s.expect('file:x');
    await s.rebuild();
    s.replaceYaml('file:x', 'kind: DNSRecordSet\nspec: [unclosed\n');
    await s.rebuild();
    expect(logged).toContain('records file is broken; serving the last records read');
    expect(s.ready()).toBe(false); // never delivered a file that parses
    const good = 'kind: DNSRecordSet\nspec: {records: [{name: a.xcc.test, type: A, values: [10.0.0.1]}]}\n';
    s.replaceYaml('file:x', good);
    await s.rebuild();
    expect(s.ready()).toBe(true);
    expect(loads).toHaveLength(2);
    s.replaceYaml('file:x', 'spec: [broken again\n');
    await s.rebuild();
    await s.rebuild(); // the retry with the good text: same data, nothing reloaded
    expect(loads).toHaveLength(2);
    s.stop();
  });

  it('remembers the oldest change not built yet, until a build that began after it is served', async () => {
    const metrics = new Metrics();
    let now = 1_000_000_000_000;
    const s = new RecordStore([zoneConfig()], () => {}, metrics, log, {
      debounceMs: 10_000,
      builder: inProcessBuilder(),
      now: () => now,
    });
    expect(metrics.unbuiltSince).toBeUndefined();
    s.replace('file', []);
    const first = now;
    now += 1000;
    s.replace('file', sourced(recordSet('a', [{ name: 'a.xcc.test', type: 'A', values: ['10.0.0.1'] }])));
    expect(metrics.unbuiltSince).toBe(first);
    await s.rebuild();
    expect(metrics.unbuiltSince).toBeUndefined();
    s.stop();
  });
});
