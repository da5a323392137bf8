// Kubernetes mode: the TSIG keys of the zones the operator declares with
// transfer (api/zone-declaration.ts `transfer`, ADR 0216), read from the one
// Secret the declaration names in this server's namespace (capi-dns-tsig-keys),
// one data key per zone (its name), as tsig-keygen writes it
// (declared-secret-keys.ts). A key that cannot be read keeps the last one read
// for its zone: its transfers go on as they were. The --tsig-key-file keys are
// not read here and win.
import { parseTsigKeys } from '../transfer/key-file.js';
import type { TsigKey } from '../transfer/tsig.js';
import { DeclaredSecretKeys, type DeclaredSecretKeysOptions } from './declared-secret-keys.js';

export function tsigKeySource(opts: DeclaredSecretKeysOptions<TsigKey>): DeclaredSecretKeys<TsigKey> {
  return new DeclaredSecretKeys(
    {
      source: 'tsig-keys',
      what: 'TSIG',
      meanwhile: 'the zone keeps its transfers as they were',
      keyOf: (z) => z.transfer && { secret: z.transfer.tsigSecret, key: z.name },
      parse: (text, where) => parseTsigKeys(text, where)[0]!,
    },
    opts,
  );
}
