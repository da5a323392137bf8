// Pure: a zone's signing key as the operator sees it (ADR 0106): a PKCS#8 PEM
// private key → its DNSKEY (flags 257, a combined signing key), key tag and
// DS for the parent (RFC 4034 sections 2, 5 and appendix B; SHA-256, RFC
// 4509), and a new key when the DNSZone names none. The dns-server signs with
// the same key (dns-server/dnssec/key.ts); the two programs share no code, so
// the DS is checked against BIND's dnssec-dsfromkey in dnssec-key.test.ts.
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
} from 'node:crypto';
import type { DnssecAlgorithm } from '../../api/index.js';

const ALGORITHM_NUMBER: Record<DnssecAlgorithm, number> = { ECDSAP256SHA256: 13, ED25519: 15 };
/** Zone Key and Secure Entry Point: the one key signs everything and is the one the DS names. */
const CSK_FLAGS = 257;

export class ZoneKeyError extends Error {}

export interface ZoneKeyInfo {
  algorithm: DnssecAlgorithm;
  keyTag: number;
  /** "257 3 <alg> <base64>", for trust anchors. */
  dnskey: string;
  /** "<key tag> <alg> 2 <HEX>". */
  ds: string;
}

/** The DNSKEY and DS of a PEM private key for `zone`; throws ZoneKeyError saying what is wrong. */
export function zoneKeyInfo(zone: string, pem: string): ZoneKeyInfo {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (err) {
    throw new ZoneKeyError(`not a PEM private key: ${(err as Error).message}`);
  }
  const jwk = createPublicKey(key).export({ format: 'jwk' });
  let algorithm: DnssecAlgorithm;
  let publicKey: Buffer;
  if (key.asymmetricKeyType === 'ec' && jwk.crv === 'P-256') {
    algorithm = 'ECDSAP256SHA256';
    // RFC 6605 section 4: Q as x || y.
    publicKey = Buffer.concat([Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
  } else if (key.asymmetricKeyType === 'ed25519') {
    algorithm = 'ED25519';
    publicKey = Buffer.from(jwk.x!, 'base64url'); // RFC 8080 section 3
  } else
    throw new ZoneKeyError(
      `a ${key.asymmetricKeyType}${jwk.crv ? ` ${jwk.crv}` : ''} key: only ECDSA P-256 (ECDSAP256SHA256) and Ed25519 sign zones`,
    );
  const rdata = Buffer.alloc(4 + publicKey.length);
  rdata.writeUInt16BE(CSK_FLAGS, 0);
  rdata[2] = 3; // RFC 4034 section 2.1.2
  rdata[3] = ALGORITHM_NUMBER[algorithm];
  publicKey.copy(rdata, 4);
  const tag = keyTag(rdata);
  const digest = createHash('sha256').update(canonicalName(zone)).update(rdata).digest('hex').toUpperCase();
  return {
    algorithm,
    keyTag: tag,
    dnskey: `${CSK_FLAGS} 3 ${ALGORITHM_NUMBER[algorithm]} ${publicKey.toString('base64')}`,
    ds: `${tag} ${ALGORITHM_NUMBER[algorithm]} 2 ${digest}`,
  };
}

/** A new private key in PKCS#8 PEM. */
export function generateZoneKey(algorithm: DnssecAlgorithm): string {
  const { privateKey } =
    algorithm === 'ED25519'
      ? generateKeyPairSync('ed25519')
      : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
}

/** RFC 4034 appendix B (every algorithm but 1). */
function keyTag(rdata: Uint8Array): number {
  let ac = 0;
  for (let i = 0; i < rdata.length; i++) ac += i & 1 ? rdata[i]! : rdata[i]! << 8;
  ac += (ac >> 16) & 0xffff;
  return ac & 0xffff;
}

/** The owner name in canonical wire form (RFC 4034 section 6.2: lower case, uncompressed). */
function canonicalName(zone: string): Buffer {
  const labels = zone.toLowerCase().replace(/\.$/, '').split('.').filter(Boolean);
  return Buffer.concat([
    ...labels.map((l) => {
      const b = Buffer.from(l, 'ascii');
      return Buffer.concat([Buffer.from([b.length]), b]);
    }),
    Buffer.from([0]),
  ]);
}
