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
  it.each([
    ['not JSON', '{', 'not JSON'],
    ['no list', '{}', 'no "zones" list'],
    ['a name that is not one', '{"zones":[{"name":"a b"}]}', 'zones[0]: "a b" is not a DNS name'],
    ['a zone twice', '{"zones":[{"name":"a.example"},{"name":"a.example"}]}', 'zones[1]: a.example twice'],
    ['a negative TTL', '{"zones":[{"name":"a.example","soa":{"ttl":-1}}]}', 'zones[0].soa.ttl'],
    ['a bad name server', '{"zones":[{"name":"a.example","nameServers":["x y"]}]}', 'zones[0].nameServers'],
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
