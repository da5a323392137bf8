// A zone's signing key: parsed from PKCS#8 PEM (what the operator's Secret and
// the --dnssec-key file hold), its DNSKEY RDATA, key tag and DS (RFC 4034
// sections 2, 5 and appendix B). One key signs everything (a combined signing
// key, CSK: flags 257), ADR 0106.
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  type KeyObject,
} from 'node:crypto';
import { nameWire } from './wire.js';

/** DNSSEC algorithm numbers (IANA): ECDSAP256SHA256 (RFC 6605) and ED25519 (RFC 8080). */
export const ALGORITHM = { ECDSAP256SHA256: 13, ED25519: 15 } as const;
export type AlgorithmName = keyof typeof ALGORITHM;

/** Zone Key (bit 7) and Secure Entry Point (bit 15): a CSK, the key the parent's DS names. */
export const CSK_FLAGS = 257;

export class KeyError extends Error {}

export interface ZoneKey {
  algorithm: number;
  flags: number;
  /** DNSKEY RDATA: flags, protocol 3, algorithm, public key. */
  dnskey: Buffer;
  keyTag: number;
  /** Signs `data` as the algorithm asks (ECDSA: r || s, 64 octets, RFC 6605 section 4). */
  sign(data: Buffer): Buffer;
}

/** Parses a PKCS#8 (or SEC1) PEM private key of P-256 or Ed25519. Throws KeyError saying what is wrong. */
export function parseKey(pem: string): ZoneKey {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (err) {
    throw new KeyError(`not a PEM private key: ${(err as Error).message}`);
  }
  const jwk = createPublicKey(key).export({ format: 'jwk' });
  let algorithm: number;
  let publicKey: Buffer;
  if (key.asymmetricKeyType === 'ec' && jwk.crv === 'P-256') {
    algorithm = ALGORITHM.ECDSAP256SHA256;
    // RFC 6605 section 4: the public key is Q as x || y, 32 octets each.
    publicKey = Buffer.concat([Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
  } else if (key.asymmetricKeyType === 'ed25519') {
    algorithm = ALGORITHM.ED25519;
    publicKey = Buffer.from(jwk.x!, 'base64url'); // RFC 8080 section 3
  } else
    throw new KeyError(
      `a ${key.asymmetricKeyType}${jwk.crv ? ` ${jwk.crv}` : ''} key: only ECDSA P-256 (ECDSAP256SHA256) and Ed25519 sign zones`,
    );
  const dnskey = Buffer.alloc(4 + publicKey.length);
  dnskey.writeUInt16BE(CSK_FLAGS, 0);
  dnskey[2] = 3; // RFC 4034 section 2.1.2
  dnskey[3] = algorithm;
  publicKey.copy(dnskey, 4);
  const signWith =
    algorithm === ALGORITHM.ECDSAP256SHA256
      ? (data: Buffer) => sign('sha256', data, { key, dsaEncoding: 'ieee-p1363' })
      : (data: Buffer) => sign(null, data, key);
  return { algorithm, flags: CSK_FLAGS, dnskey, keyTag: keyTag(dnskey), sign: signWith };
}

/** RFC 4034 appendix B (every algorithm but 1). */
export function keyTag(dnskey: Uint8Array): number {
  let ac = 0;
  for (let i = 0; i < dnskey.length; i++) ac += i & 1 ? dnskey[i]! : dnskey[i]! << 8;
  ac += (ac >> 16) & 0xffff;
  return ac & 0xffff;
}

/** The DS for the parent, SHA-256 (digest type 2, RFC 4509), in presentation form: "<tag> <alg> 2 <HEX>". */
export function dsOf(apex: string, key: ZoneKey): string {
  const digest = createHash('sha256').update(nameWire(apex)).update(key.dnskey).digest('hex').toUpperCase();
  return `${key.keyTag} ${key.algorithm} 2 ${digest}`;
}

/** A new private key in PKCS#8 PEM (what the operator writes into a Secret). */
export function generateKeyPem(algorithm: AlgorithmName = 'ECDSAP256SHA256'): string {
  const { privateKey } =
    algorithm === 'ED25519'
      ? generateKeyPairSync('ed25519')
      : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
}

/** The DNSKEY in presentation form, for trust anchors and zone files: "257 3 13 <base64>". */
export function presentDnskey(key: ZoneKey): string {
  return `${key.flags} 3 ${key.algorithm} ${key.dnskey.subarray(4).toString('base64')}`;
}
