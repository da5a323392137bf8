// The signed zone as one list of RRsets (SignedZone.records, what a zone
// transfer hands out), written as a zone file and checked by BIND's and
// ldns's verifiers (local tools, like promtool in other unit tests).
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { compileZones } from '../zone/compile.js';
import { EXAMPLE_RECORDS, recordSet, sourced, zoneConfig } from '../zone/fixtures.test-support.js';
import { dsOf, generateKeyPem, keyTag, parseKey } from './key.js';
import { SignatureCache } from './rrsig.js';
import { SignedZone } from './signed-zone.js';
import { zoneFileOf } from './zone-file.js';

const run = promisify(execFile);

describe('the signed zone written out', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-zone-file-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(['ECDSAP256SHA256', 'ED25519'] as const)(
    'is fully signed with %s by dnssec-verify and ldns-verify-zone, with the DS BIND computes',
    async (algorithm) => {
      const key = parseKey(generateKeyPem(algorithm));
      const built = compileZones(sourced(recordSet('example', EXAMPLE_RECORDS)), [zoneConfig()], 7);
      const signed = new SignedZone(
        built.zones[0]!,
        key,
        new SignatureCache(),
        Math.floor(Date.now() / 1000),
      );
      const file = path.join(dir, `zone.${algorithm}`);
      writeFileSync(file, zoneFileOf('xcc.test', signed.records()));
      const bind = await run('dnssec-verify', ['-z', '-o', 'xcc.test', file]);
      expect(bind.stdout + bind.stderr).toMatch(/Zone fully signed/);
      const ldns = await run('ldns-verify-zone', [file]);
      expect(ldns.stdout + ldns.stderr).toMatch(/Zone is verified and complete/);
      const ds = await run('dnssec-dsfromkey', ['-2', '-f', file, 'xcc.test']);
      expect(ds.stdout.trim()).toBe(`xcc.test. IN DS ${dsOf('xcc.test', key)}`);
    },
  );
});

describe('keys', () => {
  it('computes the key tag of RFC 4034 appendix B', () => {
    // RFC 4034 section 5.4's example DNSKEY of dskey.example.com: key tag 60485.
    const rdata = Buffer.concat([
      Buffer.from([1, 0, 3, 5]),
      Buffer.from(
        'AQOeiiR0GOMYkDshWoSKz9XzfwJr1AYtsmx3TGkJaNXVbfi/2pHm822aJ5iI9BMzNXxeYCmZDRD99WYwYqUSdjMmmAphXdvxegXd/M5+X7OrzKBaMbCVdFLUUh6DhweJBjEVv5f2wwjM9XzcnOf+EPbtG9DMBmADjFDc2w/rljwvFw==',
        'base64',
      ),
    ]);
    expect(keyTag(rdata)).toBe(60485);
  });

  it('refuses a key of another kind, and text that is no key, saying why', () => {
    expect(() => parseKey('not a key')).toThrow(/not a PEM private key/);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({
      format: 'pem',
      type: 'pkcs8',
    });
    expect(() => parseKey(rsa.toString())).toThrow(/only ECDSA P-256 .* and Ed25519/);
  });
});
