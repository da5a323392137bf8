import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateZoneKey, zoneKeyInfo, ZoneKeyError } from './dnssec-key.js';

/** BIND's DS of a DNSKEY line, the reference the operator's DS must equal. */
function dsFromBind(zone: string, dnskey: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'capi-dns-ds-'));
  try {
    const file = join(dir, 'dnskey.db');
    writeFileSync(file, `${zone}. 3600 IN DNSKEY ${dnskey}\n`);
    const out = execFileSync('dnssec-dsfromkey', ['-2', '-f', file, zone], { encoding: 'utf8' });
    // "apps.corp.internal. IN DS 12345 13 2 ABCD…"
    return out.trim().split(/\s+/).slice(3).join(' ');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('zoneKeyInfo', () => {
  for (const algorithm of ['ECDSAP256SHA256', 'ED25519'] as const)
    it(`gives BIND's DS for a generated ${algorithm} key`, () => {
      const info = zoneKeyInfo('Apps.Corp.Internal.', generateZoneKey(algorithm));
      expect(info.algorithm).toBe(algorithm);
      expect(info.ds).toBe(dsFromBind('apps.corp.internal', info.dnskey));
      expect(info.ds.split(' ')[0]).toBe(String(info.keyTag));
    });

  it('refuses what is not a PEM private key, and keys of other algorithms', () => {
    expect(() => zoneKeyInfo('z.test', 'not a key')).toThrow(ZoneKeyError);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 })
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString();
    expect(() => zoneKeyInfo('z.test', rsa)).toThrow(/only ECDSA P-256/);
  });
});
