import { keyMapOf, TsigKeyRing } from './key-ring.js';
import { HMAC_SHA256, type TsigKey } from './tsig.js';

const key = (name: string, fill: number): TsigKey => ({
  name,
  algorithm: HMAC_SHA256,
  secret: Buffer.alloc(32, fill),
});

describe('TsigKeyRing', () => {
  it("changes in place under its users; the file's key wins over a declared one of its name", () => {
    const ring = new TsigKeyRing([key('file.', 1)]);
    const users = keyMapOf(ring.keys);
    ring.setDeclared([key('zone.', 2), key('file.', 3)]);
    expect([...users.keys()].sort()).toEqual(['file.', 'zone.']);
    expect(users.get('file.')!.secret[0]).toBe(1);
    ring.setDeclared([]);
    expect([...users.keys()]).toEqual(['file.']);
  });
});
