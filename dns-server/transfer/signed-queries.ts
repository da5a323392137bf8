// Queries signed with TSIG outside transfers: secondaries sign the SOA query
// with which they compare serials (BIND before every refresh), and RFC 8945
// section 5.3 wants a signed answer to a signed request. Checks the request,
// lets the responder answer it without its TSIG, signs the answer; a request
// that fails the check gets NOTAUTH with the TSIG error (section 5.2).
import { keyMapOf } from './key-ring.js';
import { findTsig, sign, timeOther, TSIG_ERROR, verify, type TsigKey } from './tsig.js';

const NOTAUTH = 9;

export function signedQueries(
  keys: TsigKey[] | ReadonlyMap<string, TsigKey>,
  now: () => number = () => Math.floor(Date.now() / 1000),
): (msg: Buffer, answer: (unsigned: Buffer) => Buffer | undefined) => Buffer | undefined {
  const byName = keyMapOf(keys);
  return (msg, answer) => {
    const t = now();
    const check = verify(msg, byName, t);
    if (check.ok) {
      const response = answer(withoutTsig(msg, check.tsig.start));
      return response && sign(response, check.key, { now: t, priorMac: check.tsig.mac }).message;
    }
    if (check.error === 'missing' || check.error === 'malformed') {
      // Not a TSIG the responder could rely on: answered as a query without it (FORMERR by the parser if broken).
      const at = findTsig(msg);
      return answer(typeof at === 'object' ? withoutTsig(msg, at.start) : msg);
    }
    const request = withoutTsig(msg, check.tsig.start);
    const header = answer(request);
    if (!header) return undefined;
    // The responder's answer, emptied: NOTAUTH and only the question (RFC 8945 section 5.2).
    const questionEnd = questionEndOf(header);
    const out = Buffer.from(header.subarray(0, questionEnd));
    out[2] = out[2]! & ~0x04; // no AA
    out[3] = (out[3]! & 0xf0) | NOTAUTH;
    out.writeUInt32BE(0, 6);
    out.writeUInt16BE(0, 10);
    const badtime = check.error === 'BADTIME';
    const key = check.key ?? {
      name: check.tsig.keyName,
      algorithm: 'hmac-sha256' as const,
      secret: Buffer.alloc(32),
    };
    return sign(out, key, {
      now: t,
      error: TSIG_ERROR[check.error],
      unsignedError: !badtime,
      priorMac: badtime ? check.tsig.mac : undefined,
      timeSigned: badtime ? check.tsig.timeSigned : undefined,
      other: badtime ? timeOther(t) : undefined,
    }).message;
  };
}

function withoutTsig(msg: Buffer, start: number): Buffer {
  const out = Buffer.from(msg.subarray(0, start));
  out.writeUInt16BE(out.readUInt16BE(10) - 1, 10);
  return out;
}

function questionEndOf(msg: Buffer): number {
  if (msg.readUInt16BE(4) === 0) return 12;
  let at = 12;
  // Our own response: its question is never compressed.
  while (at < msg.length && msg[at] !== 0) at += msg[at]! + 1;
  return Math.min(at + 5, msg.length);
}
