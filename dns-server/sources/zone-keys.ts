// Kubernetes mode: the signing keys of the zones the operator declares signed
// (api/zone-declaration.ts `dnssec`, ADR 0106), read from the one Secret the
// declaration names in this server's namespace (declared-secret-keys.ts); the
// store gets the PEM text, parsed by the build. A key that cannot be read
// keeps the last one read for its zone, so the zone stays served as it was
// (signed with it).
import { DeclaredSecretKeys, type DeclaredSecretKeysOptions } from './declared-secret-keys.js';

export function zoneKeySource(opts: DeclaredSecretKeysOptions<string>): DeclaredSecretKeys<string> {
  return new DeclaredSecretKeys(
    {
      source: 'dnssec-keys',
      what: 'DNSSEC',
      meanwhile: 'the zone stays served as it was',
      keyOf: (z) => z.dnssec,
      parse: (pem) => pem,
    },
    opts,
  );
}
