// A signed zone as a zone transfer hands it out (issues 43 and 44): BIND's
// dig takes it by AXFR with TSIG from a listed secondary's address, and BIND's
// dnssec-verify and ldns-verify-zone check the whole zone (DNSKEY, every RRSIG,
// the NSEC chain), not our own code.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { eventually } from '../support/kube.js';
import { newKey } from '../support/secondaries.js';
import { startTsigPrimary, type TsigPrimary } from '../support/tsig-primary.js';

const run = promisify(execFile);
const ZONE = 'signed-xfr.test';
const PRIMARY = '127.43.2.1';
/** The listed secondary's address the transfer comes from; nothing listens there (its NOTIFYs go unanswered). */
const SECONDARY = '127.43.2.2';

describe('a signed zone by AXFR', () => {
  const tsig = newKey('signed-xfr-key.');
  let primary: TsigPrimary | undefined;

  beforeAll(async () => {
    primary = await startTsigPrimary({
      zone: ZONE,
      address: PRIMARY,
      key: tsig,
      dnssec: true,
      secondaries: [`${SECONDARY}:53`],
      records: `apiVersion: connectivity.tanzu.vmware.com/v1alpha1
kind: DNSRecordSet
metadata: {name: apps, namespace: capi-dns}
spec:
  records:
  - {name: "www.${ZONE}", type: A, values: ["10.0.0.1", "10.0.0.2"]}
  - {name: "txt.${ZONE}", type: TXT, values: ["hello world"]}
  - {name: "*.wild.${ZONE}", type: A, values: ["10.0.0.3"]}
  - {name: "alias.${ZONE}", type: CNAME, values: ["www.${ZONE}"]}
  - {name: "deep.empty.${ZONE}", type: AAAA, values: ["2001:db8::1"]}
`,
    });
  });

  afterAll(async () => {
    await primary?.stop();
  });

  it('hands out the DNSKEY, every RRSIG and the NSEC chain, which dnssec-verify and ldns-verify-zone accept', async () => {
    // In the server's own folder, removed when it stops.
    const file = path.join(primary!.server.dir, 'zone.axfr');
    await eventually(async () => {
      const axfr = await run('dig', [
        `@${PRIMARY}`,
        '-p',
        String(primary!.port),
        '-b',
        SECONDARY,
        '-y',
        `hmac-sha256:${tsig.name}:${tsig.secret}`,
        ZONE,
        'AXFR',
        '+onesoa',
        '+nocmd',
        '+nostats',
        '+nocomments',
      ]);
      // dig prints the TSIG records of the stream; they are no part of the zone.
      const lines = axfr.stdout
        .split('\n')
        .filter((l) => l.trim() && !l.startsWith(';') && !/\sTSIG\s/.test(l));
      expect(lines.some((l) => /\sRRSIG\s+SOA\s/.test(l))).toBe(true);
      expect(lines.some((l) => /\sNSEC\s/.test(l))).toBe(true);
      expect(lines.some((l) => /\sDNSKEY\s/.test(l))).toBe(true);
      writeFileSync(file, `${lines.join('\n')}\n`);
    }, 20_000);
    const bind = await run('dnssec-verify', ['-z', '-o', ZONE, file]);
    expect(bind.stderr + bind.stdout).toMatch(/Zone fully signed/);
    const ldns = await run('ldns-verify-zone', [file]);
    expect(ldns.stdout + ldns.stderr).toMatch(/Zone is verified and complete/);
  });
});
