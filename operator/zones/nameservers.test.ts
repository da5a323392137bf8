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
