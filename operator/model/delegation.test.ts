import type { EnforcedZone } from '../../api/index.js';
import { checkZoneSpec, dnsNameProblem, specificity, verdictFor, type GoverningZone } from './delegation.js';

const ZONE = 'apps.corp.internal';
const none = { holders: [], namespaceLabels: () => undefined };

function zone(
  delegations: EnforcedZone['delegations'],
  enforcement: EnforcedZone['enforcement'] = 'Enforce',
): GoverningZone {
  return { name: 'apps', enforced: { zone: ZONE, enforcement, delegations } };
}

describe('dnsNameProblem', () => {
  it.each([
    ['apps.corp.internal', undefined],
    ['Apps.Corp.Internal.', undefined],
    ['internal', undefined],
    ['', 'is empty'],
    ['apps..internal', 'has the label ""'],
    ['-apps.internal', 'has the label "-apps"'],
    ['apps_x.internal', 'has the label "apps_x"'],
    [`${'a'.repeat(64)}.internal`, 'has the label'],
  ])('%s', (name, want) => {
    const got = dnsNameProblem(name);
    if (want === undefined) expect(got).toBeUndefined();
    else expect(got).toContain(want);
  });
});

describe('specificity', () => {
  it('a deeper pattern beats a broader one, a name beats the wildcard of its parent', () => {
    expect(specificity('*.pay.apps.corp.internal')).toBeGreaterThan(specificity('*.apps.corp.internal'));
    expect(specificity('x.pay.apps.corp.internal')).toBeGreaterThan(specificity('*.pay.apps.corp.internal'));
  });
});

describe('checkZoneSpec', () => {
  it('puts a valid spec in force with its defaults, names normalized', () => {
    const check = checkZoneSpec(
      {
        zone: 'Apps.Corp.Internal.',
        delegations: [{ namespaces: ['shop'], hostnames: ['Shop.apps.corp.internal'] }],
      },
      3,
      none,
    );
    expect(check.errors).toEqual([]);
    expect(check.enforced).toEqual({
      generation: 3,
      zone: ZONE,
      enforcement: 'Enforce',
      delegations: [{ namespaces: ['shop'], hostnames: ['shop.apps.corp.internal'] }],
    });
  });
  it('takes the name servers from either field, and expose', () => {
    for (const spec of [
      { zone: ZONE, nameServers: ['NS1.example.'] },
      { zone: ZONE, nameservers: { names: ['ns1.example'] } },
    ])
      expect(checkZoneSpec(spec, 1, none).enforced?.nameServers).toEqual(['ns1.example']);
    expect(checkZoneSpec({ zone: ZONE, nameservers: { expose: true } }, 1, none).enforced).toEqual({
      generation: 1,
      zone: ZONE,
      expose: true,
      enforcement: 'Enforce',
      delegations: [],
    });
  });
  it.each([
    [
      'a zone that is not a DNS name',
      { zone: 'apps_corp!', delegations: [] },
      'spec.zone "apps_corp!" is not a DNS name',
    ],
    [
      'a pattern outside the zone',
      { zone: ZONE, delegations: [{ namespaces: ['a'], hostnames: ['pay.example.com'] }] },
      'delegations[0]: "pay.example.com" is outside the zone apps.corp.internal',
    ],
    [
      'a wildcard that is not leading',
      { zone: ZONE, delegations: [{ namespaces: ['a'], hostnames: ['pay.*.apps.corp.internal'] }] },
      'delegations[0]: "pay.*.apps.corp.internal" is not a name',
    ],
    [
      'name servers given twice, in the old and the new field',
      { zone: ZONE, nameServers: ['ns1.example'], nameservers: { names: ['ns2.example'] } },
      'spec.nameServers and spec.nameservers.names are both set',
    ],
    [
      'a name server that is not a DNS name',
      { zone: ZONE, nameservers: { names: ['ns 1'] } },
      'spec.nameservers.names: "ns 1" is not a DNS name',
    ],
    [
      'a delegation to nobody',
      { zone: ZONE, delegations: [{ hostnames: ['pay.apps.corp.internal'] }] },
      'delegations[0] names no namespace',
    ],
  ])('refuses %s and puts nothing in force', (_what, spec, message) => {
    const check = checkZoneSpec(spec, 1, none);
    expect(check.errors.join('; ')).toContain(message);
    expect(check.enforced).toBeUndefined();
  });
  it('of equal patterns to different namespaces, the first in the list keeps it when none serves', () => {
    const check = checkZoneSpec(
      {
        zone: ZONE,
        delegations: [
          { namespaces: ['pay'], hostnames: ['*.pay.apps.corp.internal'] },
          { namespaces: ['team-b'], hostnames: ['*.pay.apps.corp.internal', 'b.apps.corp.internal'] },
        ],
      },
      1,
      none,
    );
    expect(check.refused).toEqual([
      'delegations[1]: *.pay.apps.corp.internal is delegated by delegations[0] too (namespaces pay), which keeps it as the first in the list',
    ]);
    expect(check.enforced?.delegations).toEqual([
      { namespaces: ['pay'], hostnames: ['*.pay.apps.corp.internal'] },
      { namespaces: ['team-b'], hostnames: ['b.apps.corp.internal'] },
    ]);
  });
  it('of equal patterns, the one whose namespace already serves a name there keeps it', () => {
    const check = checkZoneSpec(
      {
        zone: ZONE,
        delegations: [
          { namespaces: ['pay'], hostnames: ['*.pay.apps.corp.internal'] },
          { namespaceSelector: { matchLabels: { team: 'b' } }, hostnames: ['*.pay.apps.corp.internal'] },
        ],
      },
      1,
      {
        holders: [{ namespace: 'team-b', hostnames: ['x.pay.apps.corp.internal'] }],
        namespaceLabels: (ns) => (ns === 'team-b' ? { team: 'b' } : undefined),
      },
    );
    expect(check.refused[0]).toContain(
      'delegations[0]: *.pay.apps.corp.internal is delegated by delegations[1] too',
    );
    expect(check.refused[0]).toContain('as it serves names there');
    expect(check.enforced?.delegations).toEqual([
      { namespaceSelector: { matchLabels: { team: 'b' } }, hostnames: ['*.pay.apps.corp.internal'] },
    ]);
  });
});

describe('verdictFor', () => {
  const delegations = [
    { namespaces: ['shop'], hostnames: ['shop.apps.corp.internal', '*.shop.apps.corp.internal'] },
    { namespaceSelector: { matchLabels: { payments: 'true' } }, hostnames: ['*.pay.apps.corp.internal'] },
    { namespaces: ['team-b'], hostnames: ['*.apps.corp.internal'] },
  ];
  const labels = (ns: string): Record<string, string> => (ns === 'payments' ? { payments: 'true' } : {});
  it.each([
    ['shop.apps.corp.internal', 'shop', true],
    ['web.shop.apps.corp.internal', 'shop', true],
    ['web.shop.apps.corp.internal', 'team-b', false],
    ['checkout.pay.apps.corp.internal', 'payments', true],
    ['checkout.pay.apps.corp.internal', 'team-b', false],
    ['other.apps.corp.internal', 'team-b', true],
    ['other.apps.corp.internal', 'shop', false],
  ])('%s for %s: %s', (name, namespace, allowed) => {
    const v = verdictFor(name, namespace, labels(namespace), [zone(delegations)]);
    expect(v).toMatchObject({ governed: true, allowed });
  });
  it('names what is missing', () => {
    const v = verdictFor('pay.apps.corp.internal', 'team-c', {}, [zone([delegations[0]!])]);
    expect(v).toEqual({
      governed: true,
      zone: ZONE,
      dnsZone: 'apps',
      enforcement: 'Enforce',
      allowed: false,
      message: 'zone apps.corp.internal delegates it to no namespace matching team-c',
    });
  });
  it('a name outside every zone in force is not governed', () => {
    expect(verdictFor('db.xcc.test', 'shop', {}, [zone(delegations)])).toEqual({ governed: false });
  });
  it('the more specific zone governs its names', () => {
    const child: GoverningZone = {
      name: 'pay',
      enforced: {
        zone: `pay.${ZONE}`,
        enforcement: 'Enforce',
        delegations: [{ namespaces: ['payments'], hostnames: [`*.pay.${ZONE}`] }],
      },
    };
    const v = verdictFor(`x.pay.${ZONE}`, 'team-b', {}, [zone(delegations), child]);
    expect(v).toMatchObject({ dnsZone: 'pay', allowed: false });
  });
});
