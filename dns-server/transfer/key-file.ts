// TSIG keys as tsig-keygen writes them (BIND's key clause; NSD and Knot read
// the same three values): key "name" { algorithm hmac-sha256; secret "…"; };
// Parsed strictly: a file that is not one is refused with the reason.
import { normalizeName } from '../zone/name.js';
import { HMAC_SHA256, type TsigKey } from './tsig.js';

export class TsigKeyError extends Error {}

const KEY = /key\s+"([^"]+)"\s*\{([^}]*)\}\s*;/g;

export function parseTsigKeys(text: string, source: string): TsigKey[] {
  const keys: TsigKey[] = [];
  for (const m of text.matchAll(KEY)) {
    const body = m[2]!;
    const algorithm = /algorithm\s+"?([-a-z0-9.]+)"?\s*;/i.exec(body)?.[1]?.toLowerCase();
    const secret = /secret\s+"([A-Za-z0-9+/=]+)"\s*;/.exec(body)?.[1];
    keys.push(tsigKeyOf(m[1]!, algorithm, secret, `${source}: key "${m[1]}"`));
  }
  if (keys.length === 0)
    throw new TsigKeyError(`${source}: no key "name" { algorithm …; secret "…"; }; clause`);
  return keys;
}

/** A key from its three values (a Secret's keys name, algorithm, secret, or a key clause's). */
export function tsigKeyOf(
  name: string | undefined,
  algorithm: string | undefined,
  secret: string | undefined,
  where: string,
): TsigKey {
  if (!name) throw new TsigKeyError(`${where}: no key name`);
  if (algorithm?.toLowerCase().replace(/\.$/, '') !== HMAC_SHA256)
    throw new TsigKeyError(`${where}: algorithm ${algorithm ?? '(none)'}; only hmac-sha256 is supported`);
  if (!secret || !/^[A-Za-z0-9+/]+=*$/.test(secret)) throw new TsigKeyError(`${where}: no base64 secret`);
  const bytes = Buffer.from(secret, 'base64');
  // RFC 8945 section 6: a key shorter than the hash's output weakens it; tsig-keygen makes 32 octets.
  if (bytes.length < 16)
    throw new TsigKeyError(`${where}: the secret is ${bytes.length} octets, fewer than 16`);
  return { name: normalizeName(name), algorithm: HMAC_SHA256, secret: bytes };
}
