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
    const got = customHostnames({ ...self, hostnames: [name] }, 'xcc.test', [older, newer]);
    expect(got.served.length).toBe(served ? 1 : 0);
    if (!served) expect(got.refused[0]?.reason).toContain(reason);
  });

  it('reads one or several names from the annotation', () => {
    expect(annotatedHostnames('api.xcc.test, Web.xcc.test.')).toEqual(['api.xcc.test', 'web.xcc.test']);
    expect(annotatedHostnames(undefined)).toEqual([]);
  });
});

describe('customHostnames: annotations are weighed against every claim as spec.hostnames are', () => {
  const JAN1 = '2026-01-01T00:00:00.000Z';
  const JAN2 = '2026-01-02T00:00:00.000Z';
  const JAN3 = '2026-01-03T00:00:00.000Z';
  const claim = (
    gatewayDns: string,
    createdAt: string,
    names: { spec?: string[]; annotated?: string[] },
  ): HostnameClaim => ({
    gatewayDns,
    createdAt,
    hostnames: names.spec ?? [],
    ...(names.annotated
      ? {
          annotated: names.annotated.map((name) => ({
            name,
            from: `Service apps/${gatewayDns.split('/')[1]} in cluster c1`,
          })),
        }
      : {}),
  });
  const BY_ANNOTATION = 'through the fqdn annotation on Service apps/old in cluster c1';

  it.each<
    [
      string,
      HostnameClaim,
      HostnameClaim[],
      string[],
      { name: string; reason: string; kind: 'Conflict' | 'Invalid' }[],
    ]
  >([
    [
      'annotation against an older annotation: refused, naming the GatewayDNS and its Service',
      claim('team-a/new', JAN2, { annotated: ['api.xcc.test'] }),
      [claim('team-b/old', JAN1, { annotated: ['api.xcc.test'] })],
      [],
      [
        {
          name: 'api.xcc.test',
          reason: `claimed by the older gatewaydns team-b/old ${BY_ANNOTATION}`,
          kind: 'Conflict',
        },
      ],
    ],
    [
      'annotation against an older spec.hostnames: refused',
      claim('team-a/new', JAN2, { annotated: ['api.xcc.test'] }),
      [claim('team-b/old', JAN1, { spec: ['api.xcc.test'] })],
      [],
      [{ name: 'api.xcc.test', reason: 'claimed by the older gatewaydns team-b/old', kind: 'Conflict' }],
    ],
    [
      'spec.hostnames against an older annotation: refused',
      claim('team-a/new', JAN2, { spec: ['api.xcc.test'] }),
      [claim('team-b/old', JAN1, { annotated: ['API.xcc.test.'] })],
      [],
      [
        {
          name: 'api.xcc.test',
          reason: `claimed by the older gatewaydns team-b/old ${BY_ANNOTATION}`,
          kind: 'Conflict',
        },
      ],
    ],
    [
      'the older annotation keeps its name against a newer spec.hostnames',
      claim('team-a/old', JAN1, { annotated: ['api.xcc.test'] }),
      [claim('team-b/new', JAN2, { spec: ['api.xcc.test'] })],
      ['api.xcc.test'],
      [],
    ],
    [
      'created in the same second: the lower namespace/name keeps it',
      claim('team-a/db', JAN1, { annotated: ['api.xcc.test'] }),
      [claim('team-b/db', JAN1, { annotated: ['api.xcc.test'] })],
      ['api.xcc.test'],
      [],
    ],
    [
      'created in the same second: the higher namespace/name loses it',
      claim('team-b/db', JAN1, { annotated: ['api.xcc.test'] }),
      [claim('team-a/db', JAN1, { annotated: ['api.xcc.test'] })],
      [],
      [
        {
          name: 'api.xcc.test',
          reason:
            'claimed by the older gatewaydns team-a/db through the fqdn annotation on Service apps/db in cluster c1',
          kind: 'Conflict',
        },
      ],
    ],
    [
      'the oldest of several claims is the one named',
      claim('team-a/new', JAN3, { annotated: ['api.xcc.test'] }),
      [
        claim('team-c/mid', JAN2, { spec: ['api.xcc.test'] }),
        claim('team-b/old', JAN1, { annotated: ['api.xcc.test'] }),
      ],
      [],
      [
        {
          name: 'api.xcc.test',
          reason: `claimed by the older gatewaydns team-b/old ${BY_ANNOTATION}`,
          kind: 'Conflict',
        },
      ],
    ],
    [
      'one GatewayDNS asking for a name in spec.hostnames and an annotation serves it once',
      claim('team-a/db', JAN2, { spec: ['api.xcc.test'], annotated: ['api.xcc.test', 'web.xcc.test'] }),
      [],
      ['api.xcc.test', 'web.xcc.test'],
      [],
    ],
    [
      'an annotation outside the zone is refused like a spec name',
      claim('team-a/db', JAN2, { annotated: ['api.example.com'] }),
      [],
      [],
      [{ name: 'api.example.com', reason: 'outside the zone xcc.test', kind: 'Invalid' }],
    ],
  ])('%s', (_what, mine, others, served, refused) => {
    const got = customHostnames(mine, 'xcc.test', others);
    expect({ served: got.served, refused: got.refused }).toEqual({ served, refused });
  });
});

describe('customHostnames: further zones and route host names', () => {
  it('serves names in any zone the dns-servers serve, and names them all when refusing one outside', () => {
    const got = customHostnames(
      {
        ...self,
        hostnames: [],
        annotated: [
          { name: 'shop.apps.corp.internal', from: 'HTTPRoute shop/web in cluster a' },
          { name: 'x.example.com', from: 'HTTPRoute shop/web in cluster a' },
        ],
      },
      'xcc.test',
      [],
      ['apps.corp.internal'],
    );
    expect(got.served).toEqual(['shop.apps.corp.internal']);
    expect(got.refused).toEqual([
      {
        name: 'x.example.com',
        reason: 'outside the zones served (xcc.test, apps.corp.internal)',
        kind: 'Invalid',
      },
    ]);
  });

  it('names the route through which an older GatewayDNS holds a name', () => {
    const holder: HostnameClaim = {
      gatewayDns: 'team-b/edge',
      createdAt: '2026-01-01T00:00:00.000Z',
      hostnames: [],
      annotated: [{ name: 'shop.apps.corp.internal', from: 'HTTPRoute shop/web in cluster cluster-a' }],
    };
    const got = customHostnames(
      { ...self, hostnames: ['shop.apps.corp.internal'] },
      'xcc.test',
      [holder],
      ['apps.corp.internal'],
    );
    expect(got.refused[0]?.reason).toBe(
      'claimed by the older gatewaydns team-b/edge through HTTPRoute shop/web in cluster cluster-a',
    );
  });
});

describe('customHostnames with DNSZones', () => {
  const zones = [
    {
      name: 'apps',
      enforced: {
        zone: 'apps.corp.internal',
        enforcement: 'Enforce' as const,
        delegations: [{ namespaces: ['pay'], hostnames: ['pay.apps.corp.internal'] }],
      },
    },
  ];
  const delegations = { zones, labelsOf: () => ({}) };
  const squatter: HostnameClaim = {
    gatewayDns: 'team-b/squat',
    createdAt: '2026-01-01T00:00:00.000Z',
    hostnames: ['pay.apps.corp.internal'],
  };
  const owner: HostnameClaim = {
    gatewayDns: 'pay/web',
    createdAt: '2026-01-02T00:00:00.000Z',
    hostnames: ['pay.apps.corp.internal'],
  };
  it('refuses a name the zone delegates to no namespace of the claim, and names what is missing', () => {
    expect(customHostnames(squatter, 'xcc.test', [owner], [], delegations)).toEqual({
      served: [],
      refused: [
        {
          name: 'pay.apps.corp.internal',
          reason:
            'zone apps.corp.internal delegates it to no namespace matching team-b; pay.apps.corp.internal is delegated to namespaces pay',
          kind: 'NotDelegated',
        },
      ],
    });
  });
  it('an older claim from a namespace not allowed does not hold the name', () => {
    expect(customHostnames(owner, 'xcc.test', [squatter], [], delegations)).toEqual({
      served: ['pay.apps.corp.internal'],
      refused: [],
    });
  });
  it('in Audit serves as before (first claim) and lists what Enforce would withdraw', () => {
    const audit = {
      zones: [{ ...zones[0]!, enforced: { ...zones[0]!.enforced, enforcement: 'Audit' as const } }],
      labelsOf: () => ({}),
    };
    const got = customHostnames(squatter, 'xcc.test', [owner], [], audit);
    expect(got.served).toEqual(['pay.apps.corp.internal']);
    expect(got.audited?.[0]?.reason).toContain('delegates it to no namespace matching team-b');
    expect(customHostnames(owner, 'xcc.test', [squatter], [], audit).refused[0]?.kind).toBe('Conflict');
  });
  it('a name in a zone declared by flags only says so', () => {
    expect(customHostnames(self, 'xcc.test', [], ['other.test'], delegations)).toEqual({
      served: [],
      refused: [],
    });
    expect(
      customHostnames({ ...self, hostnames: ['db.other.test'] }, 'xcc.test', [], ['other.test'], delegations)
        .firstClaimZones,
    ).toEqual(['other.test']);
  });
});
