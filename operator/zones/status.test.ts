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
