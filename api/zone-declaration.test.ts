import { parseZoneDeclaration, zoneDeclarationText } from './zone-declaration.js';

describe('zone declarations', () => {
  it('round-trips, sorted by name', () => {
    const zones = [
      { name: 'b.example', nameServers: ['ns.example'] },
      { name: 'a.example', soa: { mname: 'ns1.example', ttl: 60 } },
      { name: 'c.example', dnssec: { secret: 'capi-dns-dnssec-keys', key: 'c.example.pem' } },
    ];
    const text = zoneDeclarationText(zones);
    expect(parseZoneDeclaration(text)).toEqual([zones[1], zones[0], zones[2]]);
    expect(zoneDeclarationText([...zones].reverse())).toBe(text);
  });
  it('carries the glue of in-zone name servers', () => {
    const zones = [
      {
        name: 'a.example',
        nameServers: ['c1.team.ns.a.example'],
        glue: [{ name: 'c1.team.ns.a.example', addresses: ['192.0.2.1', '2001:db8::1'] }],
      },
    ];
    expect(parseZoneDeclaration(zoneDeclarationText(zones))).toEqual(zones);
  });
  it('carries the transfer: secondaries and the TSIG Secret', () => {
    const zones = [
      {
        name: 'a.example',
        transfer: {
          secondaries: [
            { address: '127.0.0.2', port: 5353 },
            { address: '::1', port: 53 },
          ],
          tsigSecret: 'capi-dns-tsig-keys',
        },
      },
    ];
    expect(parseZoneDeclaration(zoneDeclarationText(zones))).toEqual(zones);
  });
  it.each([
    ['not JSON', '{', 'not JSON'],
    [
      'a secondary that is no address',
      '{"zones":[{"name":"a.example","transfer":{"tsigSecret":"k","secondaries":[{"address":"ns.example","port":53}]}}]}',
      'zones[0].transfer.secondaries[0].address: not an IP address',
    ],
    [
      'a secondary without a port',
      '{"zones":[{"name":"a.example","transfer":{"tsigSecret":"k","secondaries":[{"address":"192.0.2.1"}]}}]}',
      'zones[0].transfer.secondaries[0].port',
    ],
    [
      'no secondaries',
      '{"zones":[{"name":"a.example","transfer":{"tsigSecret":"k","secondaries":[]}}]}',
      'zones[0].transfer.secondaries: not a non-empty list',
    ],
    [
      'a TSIG Secret that is no name',
      '{"zones":[{"name":"a.example","transfer":{"tsigSecret":"Keys!","secondaries":[{"address":"192.0.2.1","port":53}]}}]}',
      'zones[0].transfer.tsigSecret: not a Secret name',
    ],
    ['no list', '{}', 'no "zones" list'],
    ['a name that is not one', '{"zones":[{"name":"a b"}]}', 'zones[0]: "a b" is not a DNS name'],
    ['a zone twice', '{"zones":[{"name":"a.example"},{"name":"a.example"}]}', 'zones[1]: a.example twice'],
    ['a negative TTL', '{"zones":[{"name":"a.example","soa":{"ttl":-1}}]}', 'zones[0].soa.ttl'],
    ['a bad name server', '{"zones":[{"name":"a.example","nameServers":["x y"]}]}', 'zones[0].nameServers'],
    [
      'glue outside the zone',
      '{"zones":[{"name":"a.example","glue":[{"name":"ns.b.example","addresses":["192.0.2.1"]}]}]}',
      'zones[0].glue[0].name: ns.b.example is outside the zone a.example',
    ],
    [
      'glue that is no address',
      '{"zones":[{"name":"a.example","glue":[{"name":"ns.a.example","addresses":["ns.example"]}]}]}',
      'zones[0].glue[0].addresses: not a non-empty list of IP addresses',
    ],
    [
      'glue without addresses',
      '{"zones":[{"name":"a.example","glue":[{"name":"ns.a.example","addresses":[]}]}]}',
      'zones[0].glue[0].addresses',
    ],
    ['glue not a list', '{"zones":[{"name":"a.example","glue":{}}]}', 'zones[0].glue: not a list'],
    ['dnssec without a key', '{"zones":[{"name":"a.example","dnssec":{"secret":"s"}}]}', 'zones[0].dnssec'],
    [
      'dnssec naming no Secret',
      '{"zones":[{"name":"a.example","dnssec":{"secret":"S!","key":"k"}}]}',
      'zones[0].dnssec',
    ],
    ['dnssec that is not an object', '{"zones":[{"name":"a.example","dnssec":true}]}', 'zones[0].dnssec'],
  ])('refuses %s', (_what, text, message) => {
    expect(() => parseZoneDeclaration(text)).toThrow(message);
  });
});
