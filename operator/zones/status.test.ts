import type { DNSZone } from '../../api/index.js';
import { clustersServing, declaredZones, zoneStatus } from './status.js';

const NOW = new Date('2026-11-27T12:00:00Z');

function zone(
  name: string,
  spec: DNSZone['spec'],
  extra: Partial<DNSZone['metadata']> = {},
  status?: DNSZone['status'],
): DNSZone {
  return {
    metadata: { name, generation: 1, creationTimestamp: '2026-11-27T10:00:00Z', ...extra },
    spec,
    ...(status ? { status } : {}),
  };
}

const apps = zone('apps', {
  zone: 'apps.corp.internal',
  enforcement: 'Audit',
  delegations: [{ namespaces: ['pay'], hostnames: ['pay.apps.corp.internal'] }],
});
const labels = () => undefined;

describe('zoneStatus', () => {
  it('puts the spec in force, and under Audit lists what Enforce would withdraw', () => {
    const status = zoneStatus({
      zone: apps,
      zones: [
        {
          ...apps,
          status: { enforced: { zone: 'apps.corp.internal', enforcement: 'Audit', delegations: [] } },
        },
      ],
      served: [{ gatewayDns: 'team-b/web', namespace: 'team-b', hostnames: ['pay.apps.corp.internal'] }],
      namespaceLabels: labels,
      now: NOW,
    });
    expect(status.enforced).toMatchObject({
      zone: 'apps.corp.internal',
      enforcement: 'Audit',
      generation: 1,
    });
    expect(status.audit).toEqual([
      {
        hostname: 'pay.apps.corp.internal',
        gatewayDNS: 'team-b/web',
        message:
          'not served under Enforce: pay.apps.corp.internal (zone apps.corp.internal delegates it to no namespace matching team-b; pay.apps.corp.internal is delegated to namespaces pay)',
      },
    ]);
    expect(status.holders).toEqual([{ namespace: 'team-b', hostnames: ['pay.apps.corp.internal'] }]);
    expect(status.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'True',
      reason: 'Ready',
    });
  });

  it('bad input keeps the delegations in force', () => {
    const enforced = { zone: 'apps.corp.internal', enforcement: 'Enforce' as const, delegations: [] };
    const bad = zone('apps', { zone: 'apps corp' }, { generation: 2 }, { enforced });
    const status = zoneStatus({ zone: bad, zones: [bad], served: [], namespaceLabels: labels, now: NOW });
    expect(status.enforced).toBe(enforced);
    expect(status.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'Invalid',
      message: expect.stringContaining('spec.zone "apps corp" is not a DNS name'),
    });
  });

  it('of two DNSZones for one zone the older governs; the newer says so', () => {
    const newer = zone(
      'apps-2',
      { zone: 'apps.corp.internal' },
      { creationTimestamp: '2026-11-27T11:00:00Z' },
    );
    const status = zoneStatus({
      zone: newer,
      zones: [apps, newer],
      served: [],
      namespaceLabels: labels,
      now: NOW,
    });
    expect(status.enforced).toBeUndefined();
    expect(status.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      reason: 'DuplicateZone',
      message: expect.stringContaining('DNSZone apps declares the zone apps.corp.internal and is older'),
    });
  });

  it('a pattern inside a more specific zone in force is named: that zone governs it', () => {
    const child = zone(
      'pay',
      { zone: 'pay.apps.corp.internal' },
      {},
      { enforced: { zone: 'pay.apps.corp.internal', enforcement: 'Enforce', delegations: [] } },
    );
    const status = zoneStatus({
      zone: apps,
      zones: [apps, child],
      served: [],
      namespaceLabels: labels,
      now: NOW,
    });
    expect(status.conditions?.find((c) => c.type === 'DelegationsAccepted')).toMatchObject({
      status: 'False',
      message: expect.stringContaining(
        'pay.apps.corp.internal is inside zone pay.apps.corp.internal, which DNSZone pay governs',
      ),
    });
  });
});

describe('declaredZones and clustersServing', () => {
  it('each zone in force once, the older DNSZone first; per cluster whether it is told', () => {
    const a = zone(
      'a',
      { zone: 'x.test' },
      {},
      { enforced: { zone: 'x.test', enforcement: 'Enforce', delegations: [], nameServers: ['ns.x.test'] } },
    );
    const b = zone(
      'b',
      { zone: 'x.test' },
      { creationTimestamp: '2026-11-27T11:00:00Z' },
      { enforced: { zone: 'x.test', enforcement: 'Enforce', delegations: [] } },
    );
    const gone = zone(
      'c',
      { zone: 'y.test' },
      { deletionTimestamp: '2026-11-27T11:30:00Z' },
      { enforced: { zone: 'y.test', enforcement: 'Enforce', delegations: [] } },
    );
    expect(declaredZones([b, gone, a])).toEqual([{ name: 'x.test', nameServers: ['ns.x.test'] }]);
    expect(
      clustersServing(
        'x.test',
        new Map([
          ['t/b', { error: 'unreachable' }],
          ['t/a', { declared: ['x.test'] }],
        ]),
      ),
    ).toEqual([
      { cluster: 't/a', served: true },
      { cluster: 't/b', served: false, message: 'unreachable' },
    ]);
  });
});

describe('zoneStatus: spec.dnssec (ADR 0106)', () => {
  const signed = zone('apps', { zone: 'apps.corp.internal', dnssec: { enabled: true } });
  const info = {
    algorithm: 'ECDSAP256SHA256' as const,
    keyTag: 4711,
    dnskey: '257 3 13 AAAA',
    ds: '4711 13 2 ABCDEF',
  };
  const base = { zones: [signed], served: [], namespaceLabels: labels, now: NOW };

  it('puts the DS of the key read in status.ds, Signed=True', () => {
    const status = zoneStatus({ ...base, zone: signed, key: { pem: 'x', info } });
    expect(status.ds).toEqual(['4711 13 2 ABCDEF']);
    expect(status.conditions?.find((c) => c.type === 'Signed')).toMatchObject({
      status: 'True',
      reason: 'Signed',
    });
  });

  it('a refused key keeps status.ds and says why', () => {
    const before = zone('apps', signed.spec, {}, { ds: ['4711 13 2 ABCDEF'] });
    const status = zoneStatus({
      ...base,
      zone: before,
      key: { reason: 'KeyInvalid', message: 'the Secret capi-dns-system/apps-dnssec "key.pem": not a PEM' },
    });
    expect(status.ds).toEqual(['4711 13 2 ABCDEF']);
    const c = status.conditions?.find((c) => c.type === 'Signed');
    expect(c).toMatchObject({ status: 'False', reason: 'KeyInvalid' });
    expect(c?.message).toMatch(/stays served as it was/);
  });

  it('not signing: no DS, no Signed condition', () => {
    const off = zone('apps', { zone: 'apps.corp.internal' }, {}, { ds: ['4711 13 2 ABCDEF'] });
    const status = zoneStatus({ ...base, zone: off });
    expect(status.ds).toEqual([]);
    expect(status.conditions?.some((c) => c.type === 'Signed')).toBe(false);
  });

  it('adds the DS to parentRecords beside NS and glue', () => {
    const exposed = zone('apps', {
      zone: 'apps.corp.internal',
      nameservers: { expose: true },
      dnssec: { enabled: true },
    });
    const status = zoneStatus({
      ...base,
      zones: [exposed],
      zone: exposed,
      key: { pem: 'x', info },
      nameservers: {
        nameServers: ['a.ns.apps.corp.internal'],
        glue: [],
        servers: [],
        parentRecords: ['apps.corp.internal. IN NS a.ns.apps.corp.internal.'],
        cuts: [],
        uncut: [],
        partsServedBy: () => [],
      },
    });
    expect(status.parentRecords).toEqual([
      'apps.corp.internal. IN NS a.ns.apps.corp.internal.',
      'apps.corp.internal. IN DS 4711 13 2 ABCDEF',
    ]);
  });
});

describe('declaredZones: dnssec', () => {
  it('names the key of a signed zone in the declaration', () => {
    const z = zone(
      'apps',
      { zone: 'apps.corp.internal' },
      {},
      { enforced: { zone: 'apps.corp.internal', enforcement: 'Enforce', delegations: [] } },
    );
    const dnssec = { secret: 'capi-dns-dnssec-keys', key: 'apps.corp.internal.pem' };
    expect(
      declaredZones([z], undefined, (name) => (name === 'apps.corp.internal' ? dnssec : undefined)),
    ).toEqual([{ name: 'apps.corp.internal', dnssec }]);
  });
});
