import type { DNSZone, DNSZoneSpec } from '../../api/index.js';
import { keySecretOf, secretsNamedBy, secretsNamedByAll, zonesNaming } from './key-secrets.js';

const KEYS = 'capi-dns-system';

function zone(name: string, spec: Partial<DNSZoneSpec>): DNSZone {
  return { metadata: { name }, spec: { zone: `${name}.corp.internal`, ...spec } };
}

const generated = zone('gen', { dnssec: { enabled: true } });
const named = zone('named', {
  dnssec: { enabled: true, keySecretRef: { namespace: 'dns-admin', name: 'shared-key' } },
});
const sharing = zone('sharing', {
  dnssec: { enabled: true, keySecretRef: { namespace: 'dns-admin', name: 'shared-key' } },
  transfer: {
    secondaries: [{ address: '127.0.0.2' }],
    tsigSecretRef: { namespace: 'dns-admin', name: 'xfr' },
  },
});
const unsigned = zone('unsigned', {
  dnssec: { enabled: false, keySecretRef: { namespace: 'dns-admin', name: 'old-key' } },
});
const plain = zone('plain', {});
const ALL = [generated, named, sharing, unsigned, plain];

describe('the Secrets a DNSZone names', () => {
  it('a generated key is <dnszone>-dnssec in the key namespace; a keySecretRef is where it says', () => {
    expect(keySecretOf(generated, KEYS)).toEqual({ namespace: KEYS, name: 'gen-dnssec', generated: true });
    expect(keySecretOf(named, KEYS)).toEqual({
      namespace: 'dns-admin',
      name: 'shared-key',
      generated: false,
    });
  });

  it('names the key only while signed, and the TSIG Secret of a transfer', () => {
    expect(secretsNamedBy(generated, KEYS)).toEqual([{ namespace: KEYS, name: 'gen-dnssec' }]);
    expect(secretsNamedBy(sharing, KEYS)).toEqual([
      { namespace: 'dns-admin', name: 'shared-key' },
      { namespace: 'dns-admin', name: 'xfr' },
    ]);
    expect(secretsNamedBy(unsigned, KEYS)).toEqual([]);
    expect(secretsNamedBy(plain, KEYS)).toEqual([]);
  });

  it('every Secret once, however many zones name it', () => {
    expect([...secretsNamedByAll(ALL, KEYS).keys()].sort()).toEqual([
      'capi-dns-system/gen-dnssec',
      'dns-admin/shared-key',
      'dns-admin/xfr',
    ]);
  });

  it('maps a Secret to the zones that name it, and only those', () => {
    expect(zonesNaming(ALL, { namespace: 'dns-admin', name: 'shared-key' }, KEYS)).toEqual([
      'named',
      'sharing',
    ]);
    expect(zonesNaming(ALL, { namespace: 'dns-admin', name: 'xfr' }, KEYS)).toEqual(['sharing']);
    expect(zonesNaming(ALL, { namespace: KEYS, name: 'gen-dnssec' }, KEYS)).toEqual(['gen']);
    // The same name in another namespace, and a key no signed zone reads, name nothing.
    expect(zonesNaming(ALL, { namespace: 'other', name: 'gen-dnssec' }, KEYS)).toEqual([]);
    expect(zonesNaming(ALL, { namespace: 'dns-admin', name: 'old-key' }, KEYS)).toEqual([]);
  });
});
