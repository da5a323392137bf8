import type { DNSRecord, DNSRecordSet } from '../../../api/index.js';
import { MAX_ANSWER_OCTETS, answerOctets } from '../../../api/index.js';
import { fitRecordSet, fitRecordSets } from './limits.js';

const ipv4 = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

function set(records: DNSRecord[]): DNSRecordSet {
  return {
    apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
    kind: 'DNSRecordSet',
    metadata: { name: 'ns.gw', namespace: 'capi-dns' },
    spec: { records },
  };
}

const D = 'pg.a.ns.clusters.xcc.test';

describe('fitRecordSet', () => {
  it('leaves a record set that fits as it is', () => {
    const input = set([{ name: `*.${D}`, type: 'A', values: [ipv4(1)] }]);
    expect(fitRecordSet(input)).toEqual({ set: input, omitted: [] });
  });

  it.each([
    ['A', 4000, 4000],
    ['A', 5000, Math.floor(MAX_ANSWER_OCTETS / 16)],
    ['AAAA', 3000, Math.floor(MAX_ANSWER_OCTETS / 28)],
  ] as const)('%s with %i values keeps %i: what fits a DNS message over TCP', (type, total, kept) => {
    const values = Array.from({ length: total }, (_, i) =>
      type === 'A' ? ipv4(i) : `fd00::${i.toString(16)}`,
    );
    const { set: out, omitted } = fitRecordSet(set([{ name: `*.${D}`, type, values }]));
    expect(out.spec.records[0]!.values).toHaveLength(kept);
    expect(answerOctets(out.spec.records[0]!)).toBeLessThanOrEqual(MAX_ANSWER_OCTETS);
    expect(omitted).toEqual(
      kept === total
        ? []
        : [{ name: `*.${D}`, type, kept, total, reason: 'answer larger than a DNS message' }],
    );
  });

  it('over the etcd budget, drops per-pod names first, then SRV, and keeps the wildcard names', () => {
    const records: DNSRecord[] = [
      { name: `*.${D}`, type: 'A', values: [ipv4(1), ipv4(2)] },
      { name: D, type: 'A', values: [ipv4(1), ipv4(2)] },
      { name: `_pg._tcp.${D}`, type: 'SRV', values: [`0 0 5432 pg-0.${D}.`, `0 0 5432 pg-1.${D}.`] },
      { name: `pg-0.${D}`, type: 'A', values: [ipv4(1)] },
      { name: `pg-1.${D}`, type: 'A', values: [ipv4(2)] },
    ];
    const full = JSON.stringify(set(records)).length;
    const perPod = JSON.stringify(records[3]).length + 1;
    const fit = (jsonOctets: number) =>
      fitRecordSet(set(records), { answerOctets: MAX_ANSWER_OCTETS, jsonOctets });
    expect(fit(full - perPod).omitted.map((o) => o.name)).toEqual([`pg-1.${D}`]);
    expect(fit(full - 2 * perPod).omitted.map((o) => o.name)).toEqual([`pg-1.${D}`, `pg-0.${D}`]);
    const small = fit(JSON.stringify(set(records.slice(0, 2))).length);
    expect(small.set.spec.records.map((r) => r.name)).toEqual([`*.${D}`, D]);
    expect(small.omitted.map((o) => [o.name, o.kept, o.reason])).toEqual([
      [`pg-1.${D}`, 0, 'record set larger than etcd allows'],
      [`pg-0.${D}`, 0, 'record set larger than etcd allows'],
      [`_pg._tcp.${D}`, 0, 'record set larger than etcd allows'],
    ]);
    expect(JSON.stringify(small.set).length).toBeLessThanOrEqual(
      JSON.stringify(set(records.slice(0, 2))).length,
    );
  });
});

describe('fitRecordSets', () => {
  const shard = (name: string, records: DNSRecord[]): DNSRecordSet => ({
    ...set(records),
    metadata: { name, namespace: 'capi-dns' },
  });
  const ANY = '*.pg.ns.clusters.xcc.test';

  it('fits the merged answer: values beyond what one message holds leave every shard alike', () => {
    // Two source clusters of 3,000 addresses each: each shard fits alone, their union (6,000) does not.
    const a = Array.from({ length: 3000 }, (_, i) => ipv4(i));
    const b = Array.from({ length: 3000 }, (_, i) => ipv4(100_000 + i));
    const { sets, omitted } = fitRecordSets([
      shard('ns.gw.a', [{ name: ANY, type: 'A', values: a }]),
      shard('ns.gw.b', [{ name: ANY, type: 'A', values: b }]),
    ]);
    const served = sets.flatMap((s) => s.spec.records.flatMap((r) => r.values));
    expect(answerOctets({ type: 'A', values: served })).toBeLessThanOrEqual(MAX_ANSWER_OCTETS);
    expect(omitted).toEqual([
      {
        name: ANY,
        type: 'A',
        kept: served.length,
        total: 6000,
        reason: 'answer larger than a DNS message',
      },
    ]);
    // The kept values are the first of the sorted union, wherever they came from.
    expect(new Set(served)).toEqual(new Set([...a, ...b].sort().slice(0, served.length)));
  });

  it('drops a shard left with no records', () => {
    const big = Array.from({ length: 5000 }, (_, i) => ipv4(i));
    const { sets } = fitRecordSets([
      shard('ns.gw.a', [{ name: ANY, type: 'A', values: big }]),
      shard('ns.gw.b', [{ name: ANY, type: 'A', values: ['192.0.2.1'] }]),
    ]);
    expect(sets.map((s) => s.metadata.name)).toEqual(['ns.gw.a']);
  });
});
