import { annotatedHostnames, customHostnames, type HostnameClaim } from './hostnames.js';

const self: HostnameClaim = { gatewayDns: 'team-a/db', createdAt: '2026-01-02T00:00:00.000Z', hostnames: [] };

describe('customHostnames', () => {
  const older: HostnameClaim = {
    gatewayDns: 'team-b/db',
    createdAt: '2026-01-01T00:00:00.000Z',
    hostnames: ['taken.xcc.test'],
  };
  const newer: HostnameClaim = {
    gatewayDns: 'team-c/db',
    createdAt: '2026-01-03T00:00:00.000Z',
    hostnames: ['mine.xcc.test'],
  };
  it.each([
    ['a name inside the zone is served', 'db.xcc.test', true, ''],
    ['case and a final dot do not matter', 'DB.XCC.test.', true, ''],
    ['a name outside the zone is refused', 'db.example.com', false, 'outside the zone xcc.test'],
    ['the apex itself is refused', 'xcc.test', false, 'outside the zone'],
    [
      'a name under clusters.<suffix> is refused',
      'x.gateway.team-b.clusters.xcc.test',
      false,
      'where names are generated',
    ],
    [
      'a name an older GatewayDNS asks for is refused',
      'taken.xcc.test',
      false,
      'claimed by the older gatewaydns team-b/db',
    ],
    ['a newer GatewayDNS does not take a name away', 'mine.xcc.test', true, ''],
  ])('%s', (_what, name, served, reason) => {
    const got = customHostnames(self, [name], 'xcc.test', [older, newer]);
    expect(got.served.length).toBe(served ? 1 : 0);
    if (!served) expect(got.refused[0]?.reason).toContain(reason);
  });

  it('reads one or several names from the annotation', () => {
    expect(annotatedHostnames('api.xcc.test, Web.xcc.test.')).toEqual(['api.xcc.test', 'web.xcc.test']);
    expect(annotatedHostnames(undefined)).toEqual([]);
  });
});
