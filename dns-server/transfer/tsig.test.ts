import dnsPacket from 'dns-packet';
import { findTsig, HMAC_SHA256, sign, TSIG_ERROR, verify, type TsigKey } from './tsig.js';
import { parseTsigKeys, tsigKeyOf, TsigKeyError } from './key-file.js';

const key: TsigKey = { name: 'xfr-key', algorithm: HMAC_SHA256, secret: Buffer.alloc(32, 7) };
const keys = new Map([[key.name, key]]);
const NOW = 1_800_000_000;

function query(): Buffer {
  return dnsPacket.encode({
    type: 'query',
    id: 4242,
    questions: [{ type: 'AXFR', name: 'xfr.test', class: 'IN' }],
  });
}

describe('TSIG (RFC 8945)', () => {
  it('signs a request that verifies, and a response chained to its MAC', () => {
    const { message, mac } = sign(query(), key, { now: NOW });
    expect(message.readUInt16BE(10)).toBe(1);
    const check = verify(message, keys, NOW + 10);
    expect(check.ok).toBe(true);
    const response = Buffer.from(query());
    response[2] = 0x84;
    const signed = sign(response, key, { now: NOW, priorMac: mac });
    expect(verify(signed.message, keys, NOW, mac).ok).toBe(true);
    // Against another request's MAC it does not.
    expect(verify(signed.message, keys, NOW, Buffer.alloc(32)).ok).toBe(false);
  });

  it('says BADSIG for another secret, BADKEY for an unknown key, BADTIME outside the fudge', () => {
    const other = { ...key, secret: Buffer.alloc(32, 8) };
    const bad = verify(sign(query(), other, { now: NOW }).message, keys, NOW);
    expect(bad).toMatchObject({ ok: false, error: 'BADSIG' });
    const unknown = verify(sign(query(), { ...key, name: 'nobody' }, { now: NOW }).message, keys, NOW);
    expect(unknown).toMatchObject({ ok: false, error: 'BADKEY' });
    const late = verify(sign(query(), key, { now: NOW }).message, keys, NOW + 301);
    expect(late).toMatchObject({ ok: false, error: 'BADTIME' });
    expect(TSIG_ERROR.BADTIME).toBe(18);
  });

  it('a tampered message fails; a message without TSIG is "missing"; a TSIG not last is malformed', () => {
    const { message } = sign(query(), key, { now: NOW });
    const tampered = Buffer.from(message);
    tampered[13] = tampered[13]! ^ 1;
    expect(verify(tampered, keys, NOW).ok).toBe(false);
    expect(verify(query(), keys, NOW)).toEqual({ ok: false, error: 'missing' });
    const twice = Buffer.concat([message, message.subarray(query().length)]);
    twice.writeUInt16BE(2, 10);
    expect(findTsig(twice)).toBe('malformed');
  });

  it('reads the key file tsig-keygen writes, strictly', () => {
    const text =
      'key "xfr-key." {\n\talgorithm hmac-sha256;\n\tsecret "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=";\n};\n';
    const [parsed] = parseTsigKeys(text, 'key.conf');
    expect(parsed!.name).toBe('xfr-key');
    expect(parsed!.secret.length).toBe(32);
    expect(() => parseTsigKeys('nothing here', 'f')).toThrow(TsigKeyError);
    expect(() => tsigKeyOf('k', 'hmac-md5', 'BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=', 'f')).toThrow(
      /only hmac-sha256/,
    );
    expect(() => tsigKeyOf('k', 'hmac-sha256', 'AAAA', 'f')).toThrow(/fewer than 16/);
  });
});
