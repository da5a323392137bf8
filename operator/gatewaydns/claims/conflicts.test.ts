import { claimedDomains, conflictsFor } from './conflicts.js';

describe('conflicts', () => {
  const domains = (label: string, clusters: string[]) =>
    claimedDomains('dev-team', { gatewayLabel: label }, clusters, 'xcc.test');

  it('lets the older GatewayDNS keep contested domains', () => {
    const older = { name: 'z', createdAt: '2024-01-01T00:00:00.000Z', domains: domains('gateway', ['a']) };
    const newer = {
      name: 'b',
      createdAt: '2024-01-02T00:00:00.000Z',
      domains: domains('gateway', ['a', 'b']),
    };
    expect(conflictsFor(newer, [older])).toEqual({
      lostDomains: ['gateway.a.dev-team.clusters.xcc.test', 'gateway.dev-team.clusters.xcc.test'],
      with: ['z'],
    });
    expect(conflictsFor(older, [newer])).toEqual({ lostDomains: [], with: ['b'] });
  });

  it('breaks a tie by name and finds none between different labels', () => {
    const t = '2024-01-01T00:00:00.000Z';
    const a = { name: 'a', createdAt: t, domains: domains('gateway', ['x']) };
    const b = { name: 'b', createdAt: t, domains: domains('gateway', ['x']) };
    expect(conflictsFor(a, [b]).lostDomains).toEqual([]);
    expect(conflictsFor(b, [a]).lostDomains.length).toBe(2);
    const c = { name: 'c', createdAt: t, domains: domains('other', ['x']) };
    expect(conflictsFor(c, [a, b])).toEqual({ lostDomains: [], with: [] });
  });

  it('claims nothing without selected clusters', () => {
    expect(domains('gateway', [])).toEqual([]);
  });
});
