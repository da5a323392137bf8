import {
  clusterSerial,
  parseServedSerials,
  serializeServedSerials,
  servedSerialsName,
  ServedSerialsError,
} from './served-serials.js';

describe('served serials report', () => {
  it('reads back as written, the same serials giving the same text', () => {
    const text = serializeServedSerials({ zones: { 'b.test': 2, 'a.test': 1764280000 } });
    expect(text).toBe('{"zones":{"a.test":1764280000,"b.test":2}}');
    expect(parseServedSerials(text)).toEqual({ zones: { 'a.test': 1764280000, 'b.test': 2 } });
    expect(servedSerialsName('capi-dns-server-abc')).toBe('capi-dns-serials-capi-dns-server-abc');
  });

  it('refuses a report that is not one, saying what is wrong', () => {
    expect(() => parseServedSerials('{')).toThrow(ServedSerialsError);
    expect(() => parseServedSerials('{"zones":[]}')).toThrow(/zones must be an object/);
    expect(() => parseServedSerials('{"zones":{"a.test":-1}}')).toThrow(/a\.test is not a 32-bit serial/);
    expect(() => parseServedSerials('{"zones":{"a.test":4294967296}}')).toThrow(/32-bit/);
    expect(() => parseServedSerials('{"zones":{"a.test":"1"}}')).toThrow(/32-bit/);
  });

  it("a cluster's serial is the lowest its replicas report, in RFC 1982 order", () => {
    const r = (zones: Record<string, number>) => ({ zones });
    expect(clusterSerial([r({ 'a.test': 20 }), r({ 'a.test': 10 }), r({})], 'a.test')).toBe(10);
    expect(clusterSerial([r({ 'b.test': 20 })], 'a.test')).toBeUndefined();
    expect(clusterSerial([], 'a.test')).toBeUndefined();
    // Across the wrap: 4294967295 is older than 5.
    expect(clusterSerial([r({ 'a.test': 5 }), r({ 'a.test': 4294967295 })], 'a.test')).toBe(4294967295);
  });
});
