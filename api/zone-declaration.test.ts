import { parseZoneDeclaration, zoneDeclarationText } from './zone-declaration.js';

describe('zone declarations', () => {
  it('round-trips, sorted by name', () => {
    const zones = [
      { name: 'b.example', nameServers: ['ns.example'] },
      { name: 'a.example', soa: { mname: 'ns1.example', ttl: 60 } },
    ];
    const text = zoneDeclarationText(zones);
    expect(parseZoneDeclaration(text)).toEqual([zones[1], zones[0]]);
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
  it.each([
    ['not JSON', '{', 'not JSON'],
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
  ])('refuses %s', (_what, text, message) => {
    expect(() => parseZoneDeclaration(text)).toThrow(message);
  });
});
