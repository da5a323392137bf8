// The TSIG keys one process signs and checks with: the key file's (--tsig-key-file,
// read once at start) and those of the zones the operator declares with
// transfer (the Secret capi-dns-tsig-keys, read at run time; ADR 0216). One Map,
// shared by reference by the transfer server, the signed-query check and the
// notifier of the process, replaced in place when the declared keys change; a
// key of the file wins over a declared one of the same name.
import type { TsigKey } from './tsig.js';

export class TsigKeyRing {
  readonly keys = new Map<string, TsigKey>();

  constructor(private readonly fixed: readonly TsigKey[]) {
    this.setDeclared([]);
  }

  setDeclared(declared: readonly TsigKey[]): void {
    this.keys.clear();
    for (const k of declared) this.keys.set(k.name, k);
    for (const k of this.fixed) this.keys.set(k.name, k);
  }
}

/** Keys by name: a ring's own Map (it changes under its users), or a fixed list's. */
export function keyMapOf(
  keys: readonly TsigKey[] | ReadonlyMap<string, TsigKey>,
): ReadonlyMap<string, TsigKey> {
  return keys instanceof Map ? keys : new Map((keys as readonly TsigKey[]).map((k) => [k.name, k]));
}
