import type { ZoneConfig } from './compile.js';
import { servedZones, zoneConfigFor, type ZoneDefaults } from './declared.js';

const defaults: ZoneDefaults = {
  nameServers: [],
  ttl: 30,
  refresh: 3600,
  retry: 600,
  expire: 86400,
  minimum: 5,
};

describe('zoneConfigFor', () => {
  it('takes what the flags would give a --zone of that name', () => {
    expect(zoneConfigFor({ name: 'Apps.Corp.Internal.' }, defaults)).toEqual({
      name: 'apps.corp.internal',
      mname: 'ns1.apps.corp.internal',
      rname: 'hostmaster.apps.corp.internal',
      nameServers: ['ns1.apps.corp.internal'],
      ttl: 30,
      refresh: 3600,
      retry: 600,
      expire: 86400,
      minimum: 5,
    });
  });
  it('a declaration sets SOA and NS over the flags', () => {
    const z = zoneConfigFor(
      {
        name: 'apps.corp.internal',
        soa: { mname: 'ns1.corp.example', minimum: 60 },
        nameServers: ['a.ns.example', 'b.ns.example'],
      },
      { ...defaults, rname: 'dns.corp.example', nameServers: ['flag.ns.example'] },
    );
    expect(z).toMatchObject({
      mname: 'ns1.corp.example',
      rname: 'dns.corp.example',
      nameServers: ['a.ns.example', 'b.ns.example'],
      minimum: 60,
      ttl: 30,
    });
  });
});

describe('servedZones', () => {
  const flag: ZoneConfig = zoneConfigFor({ name: 'xcc.test' }, defaults);
  it('the flags come first; a declared zone that a flag names, or nests with, is left out', () => {
    const got = servedZones(
      [flag],
      [{ name: 'apps.corp.internal' }, { name: 'xcc.test' }, { name: 'a.xcc.test' }, { name: 'test' }],
      defaults,
    );
    expect(got.zones.map((z) => z.name)).toEqual(['xcc.test', 'apps.corp.internal']);
    expect(got.ignored).toEqual(['xcc.test', 'a.xcc.test', 'test']);
  });
  it("a declaration of a flag's zone lends it NS, glue and cuts, and its parts are served (ADR 0215)", () => {
    const got = servedZones(
      [flag],
      [
        {
          name: 'xcc.test',
          nameServers: ['a.shop.ns.xcc.test'],
          glue: [{ name: 'a.shop.ns.xcc.test', addresses: ['192.0.2.1'] }],
          cuts: [{ name: 'shop.xcc.test', nameServers: ['a.shop.ns.xcc.test'] }],
        },
        { name: 'shop.xcc.test', nameServers: ['a.shop.ns.xcc.test'] },
        { name: 'other.xcc.test' },
      ],
      defaults,
    );
    expect(got.zones.map((z) => z.name)).toEqual(['xcc.test', 'shop.xcc.test']);
    expect(got.zones[0]).toMatchObject({
      mname: flag.mname,
      nameServers: ['a.shop.ns.xcc.test'],
      glue: [{ name: 'a.shop.ns.xcc.test', addresses: ['192.0.2.1'] }],
      cuts: [{ name: 'shop.xcc.test', nameServers: ['a.shop.ns.xcc.test'] }],
    });
    expect(got.ignored).toEqual(['other.xcc.test']);
  });
  it('declared zones nest with each other (a namespace part inside its zone)', () => {
    const got = servedZones(
      [flag],
      [{ name: 'apps.corp.internal' }, { name: 'shop.apps.corp.internal' }],
      defaults,
    );
    expect(got.zones.map((z) => z.name)).toEqual([
      'xcc.test',
      'apps.corp.internal',
      'shop.apps.corp.internal',
    ]);
    expect(got.ignored).toEqual([]);
  });
});

describe('declared transfers (ADR 0216)', () => {
  const declared = {
    name: 'Apps.Corp.Internal.',
    transfer: { secondaries: [{ address: '127.0.0.2', port: 5353 }], tsigSecret: 'capi-dns-tsig-keys' },
  };
  it('a zone declared with transfer is offered to its secondaries once its key is read', () => {
    expect(servedZones([], [declared], defaults).zones[0]!.transfer).toBeUndefined();
    expect(
      servedZones([], [declared], defaults, new Map([['apps.corp.internal', 'xfr-key.']])).zones[0]!.transfer,
    ).toEqual({ secondaries: [{ address: '127.0.0.2', port: 5353 }], keyName: 'xfr-key.' });
  });
  it("the flags' transfer of their own zone wins", () => {
    const flag: ZoneConfig = {
      ...zoneConfigFor({ name: 'apps.corp.internal' }, defaults),
      transfer: { secondaries: [{ address: '127.0.0.9', port: 53 }], keyName: 'flag-key.' },
    };
    const served = servedZones([flag], [declared], defaults, new Map([['apps.corp.internal', 'xfr-key.']]));
    expect(served.zones).toEqual([flag]);
  });
  it("a declaration of a flag's zone with no transfer of its own lends it the transfer, its SOA kept", () => {
    const flag = zoneConfigFor({ name: 'apps.corp.internal' }, defaults);
    const served = servedZones([flag], [declared], defaults, new Map([['apps.corp.internal', 'xfr-key.']]));
    expect(served.zones).toEqual([
      { ...flag, transfer: { secondaries: [{ address: '127.0.0.2', port: 5353 }], keyName: 'xfr-key.' } },
    ]);
    // Its key not read yet: served as the flags say, without transfer.
    expect(servedZones([flag], [declared], defaults).zones).toEqual([flag]);
  });
});
