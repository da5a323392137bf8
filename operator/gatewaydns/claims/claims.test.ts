import { HostnameClaims, claimantsOf } from './claims.js';
import type { HostnameClaim } from './hostnames.js';

describe('HostnameClaims', () => {
  it('says which names a GatewayDNS took or let go, and remembers its annotations', () => {
    const claims = new HostnameClaims();
    const from = 'Service apps/db in cluster c1';
    expect(
      claims.set('team-a/db', { hostnames: ['db.xcc.test'], annotated: [{ name: 'api.xcc.test', from }] }),
    ).toEqual(['api.xcc.test', 'db.xcc.test']);
    expect(
      claims.set('team-a/db', { hostnames: ['db.xcc.test'], annotated: [{ name: 'api.xcc.test', from }] }),
    ).toEqual([]);
    expect(claims.annotatedOf('team-a/db')).toEqual([{ name: 'api.xcc.test', from }]);
    expect(
      claims.set('team-a/db', { hostnames: ['DB.xcc.test.'], annotated: [{ name: 'web.xcc.test', from }] }),
    ).toEqual(['api.xcc.test', 'web.xcc.test']);
    expect(claims.drop('team-a/db')).toEqual(['db.xcc.test', 'web.xcc.test']);
    expect(claims.annotatedOf('team-a/db')).toEqual([]);
    expect(claims.drop('team-a/db')).toEqual([]);
  });

  it('claimantsOf: the others asking for any of the names', () => {
    const others: HostnameClaim[] = [
      { gatewayDns: 'team-a/db', createdAt: '', hostnames: ['api.xcc.test'] },
      {
        gatewayDns: 'team-b/db',
        createdAt: '',
        hostnames: [],
        annotated: [{ name: 'Api.xcc.test', from: '' }],
      },
      { gatewayDns: 'team-c/db', createdAt: '', hostnames: ['web.xcc.test'] },
    ];
    expect(claimantsOf('team-a/db', ['api.xcc.test'], others)).toEqual(['team-b/db']);
    expect(claimantsOf('team-x/db', [], others)).toEqual([]);
  });
});
