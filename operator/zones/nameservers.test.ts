import type { EnforcedZone } from '../../api/index.js';
import { nameserverName, zoneNameservers } from './nameservers.js';

const zone = (over: Partial<EnforcedZone> = {}): EnforcedZone => ({
  zone: 'apps.corp.internal',
  enforcement: 'Enforce',
  delegations: [],
  expose: true,
  ...over,
});
const labels = (ns: string): Record<string, string> => (ns === 'pay' ? { payments: 'true' } : {});

describe('zoneNameservers', () => {
  it('names each exposed dns-server in the zone, with its addresses as glue, and says what the parent needs', () => {
    const out = zoneNameservers(
      zone(),
      [
        { namespace: 'shop', name: 'b', addresses: ['2001:db8::2', '192.0.2.2'] },
        { namespace: 'shop', name: 'a', addresses: ['192.0.2.1', '192.0.2.1'] },
      ],
      labels,
    );
    expect(out.nameServers).toEqual(['a.shop.ns.apps.corp.internal', 'b.shop.ns.apps.corp.internal']);
    expect(out.glue).toEqual([
      { name: 'a.shop.ns.apps.corp.internal', addresses: ['192.0.2.1'] },
      { name: 'b.shop.ns.apps.corp.internal', addresses: ['192.0.2.2', '2001:db8::2'] },
    ]);
    expect(out.servers.map((s) => s.cluster)).toEqual(['shop/a', 'shop/b']);
    expect(out.parentRecords).toEqual([
      'apps.corp.internal. IN NS a.shop.ns.apps.corp.internal.',
      'apps.corp.internal. IN NS b.shop.ns.apps.corp.internal.',
      'a.shop.ns.apps.corp.internal. IN A 192.0.2.1',
      'b.shop.ns.apps.corp.internal. IN A 192.0.2.2',
      'b.shop.ns.apps.corp.internal. IN AAAA 2001:db8::2',
    ]);
  });

  it('leaves out a cluster whose exposed dns-server has no address (gone, pending, unreachable)', () => {
    const out = zoneNameservers(
      zone(),
      [
        { namespace: 'shop', name: 'a', addresses: [] },
        { namespace: 'shop', name: 'b', addresses: ['192.0.2.2'] },
      ],
      labels,
    );
    expect(out.servers.map((s) => s.name)).toEqual(['b.shop.ns.apps.corp.internal']);
  });

  it('under Enforce with delegations, only the clusters of the delegated namespaces (by name or label) serve it', () => {
    const out = zoneNameservers(
      zone({
        delegations: [
          { namespaces: ['shop'], hostnames: ['*.shop.apps.corp.internal'] },
          {
            namespaceSelector: { matchLabels: { payments: 'true' } },
            hostnames: ['*.pay.apps.corp.internal'],
          },
        ],
      }),
      [
        { namespace: 'shop', name: 'a', addresses: ['192.0.2.1'] },
        { namespace: 'pay', name: 'a', addresses: ['192.0.2.3'] },
        { namespace: 'other', name: 'a', addresses: ['192.0.2.9'] },
      ],
      labels,
    );
    expect(out.servers.map((s) => s.cluster)).toEqual(['pay/a', 'shop/a']);
  });

  it('keeps the zone’s own names (a company’s secondaries) after the exposed ones', () => {
    const out = zoneNameservers(
      zone({ nameServers: ['ns1.corp.example'] }),
      [{ namespace: 'shop', name: 'a', addresses: ['192.0.2.1'] }],
      labels,
    );
    expect(out.nameServers).toEqual(['a.shop.ns.apps.corp.internal', 'ns1.corp.example']);
    expect(out.parentRecords).toContain('apps.corp.internal. IN NS ns1.corp.example.');
  });

  it('names are lower case', () => {
    expect(nameserverName('Apps.Corp.Internal.', 'Shop', 'A')).toBe('a.shop.ns.apps.corp.internal');
  });
});

describe('zone cuts per namespace part (ADR 0215)', () => {
  const two = zone({
    delegations: [
      { namespaces: ['shop'], hostnames: ['shop.apps.corp.internal', '*.shop.apps.corp.internal'] },
      { namespaceSelector: { matchLabels: { payments: 'true' } }, hostnames: ['*.pay.apps.corp.internal'] },
      { namespaces: ['web'], hostnames: ['*.apps.corp.internal'] },
      { namespaces: ['shop'], hostnames: ['x.y.pay.apps.corp.internal', '*.ns.apps.corp.internal'] },
    ],
  });
  const exposed = [
    { namespace: 'shop', name: 'a', addresses: ['192.0.2.1'] },
    { namespace: 'pay', name: 'c', addresses: ['192.0.2.3'] },
  ];

  it('cuts each part to the exposed servers of its namespaces; the apex, NS names and nested parts are not cut', () => {
    const out = zoneNameservers(two, exposed, labels);
    expect(out.cuts).toEqual([
      { name: 'pay.apps.corp.internal', nameServers: ['c.pay.ns.apps.corp.internal'] },
      { name: 'shop.apps.corp.internal', nameServers: ['a.shop.ns.apps.corp.internal'] },
    ]);
    expect(out.uncut).toEqual([
      'ns.apps.corp.internal (holds the name servers\u2019 names, ns.apps.corp.internal)'.replace(
        '\u2019',
        "'",
      ),
      'x.y.pay.apps.corp.internal (inside the part pay.apps.corp.internal)',
    ]);
    // The apex NS set: every delegated namespace's exposed servers.
    expect(out.nameServers).toEqual(['a.shop.ns.apps.corp.internal', 'c.pay.ns.apps.corp.internal']);
  });

  it('tells each namespace the parts it serves, as zones of their own with their NS set', () => {
    const out = zoneNameservers(two, exposed, labels);
    expect(out.partsServedBy('shop')).toEqual([
      { name: 'shop.apps.corp.internal', nameServers: ['a.shop.ns.apps.corp.internal'] },
    ]);
    expect(out.partsServedBy('pay').map((z) => z.name)).toEqual(['pay.apps.corp.internal']);
    expect(out.partsServedBy('web')).toEqual([]);
  });

  it('a part without an exposed server gets no cut; Audit cuts nothing', () => {
    const out = zoneNameservers(two, [exposed[0]!], labels);
    expect(out.cuts.map((c) => c.name)).toEqual(['shop.apps.corp.internal']);
    expect(out.uncut).toContain('pay.apps.corp.internal (no exposed dns-server of its namespaces)');
    expect(zoneNameservers({ ...two, enforcement: 'Audit' }, exposed, labels).cuts).toEqual([]);
  });
});

describe('zoneNameservers: the serial each cluster serves', () => {
  it("shows the lowest of a cluster's replicas for the zone, and none before one reports it", () => {
    const out = zoneNameservers(
      zone(),
      [
        {
          namespace: 'shop',
          name: 'a',
          addresses: ['192.0.2.1'],
          serials: [
            { zones: { 'apps.corp.internal': 1764280002 } },
            { zones: { 'apps.corp.internal': 1764280001 } },
          ],
        },
        { namespace: 'shop', name: 'b', addresses: ['192.0.2.2'], serials: [{ zones: { 'other.test': 5 } }] },
      ],
      labels,
    );
    expect(out.servers).toEqual([
      {
        cluster: 'shop/a',
        name: 'a.shop.ns.apps.corp.internal',
        addresses: ['192.0.2.1'],
        serial: 1764280001,
      },
      { cluster: 'shop/b', name: 'b.shop.ns.apps.corp.internal', addresses: ['192.0.2.2'] },
    ]);
  });
});
