import { canonicalLabels, compareCanonical } from './wire.js';

describe('the canonical DNS name order', () => {
  it('sorts RFC 4034 section 6.1 example names as the RFC lists them', () => {
    const ordered = [
      'example',
      'a.example',
      'yljkjljk.a.example',
      'z.a.example',
      'zabc.a.example',
      'z.example',
      '\x01.z.example',
      '*.z.example',
      '\x80.z.example',
    ];
    const shuffled = [...ordered].reverse();
    shuffled.sort((a, b) => compareCanonical(canonicalLabels(a), canonicalLabels(b)));
    expect(shuffled).toEqual(ordered);
  });

  it('orders a "." inside a label (written "\\x00" in zone names) as the octet it is', () => {
    // "a.b" as one label is 0x61 0x2e 0x62: after "a-" (0x2d), before "a0" (0x30), below no "a" name.
    const names = ['a0.zone', 'a\x00b.zone', 'a-.zone', 'a.zone', 'b.a.zone'];
    names.sort((a, b) => compareCanonical(canonicalLabels(a), canonicalLabels(b)));
    expect(names).toEqual(['a.zone', 'b.a.zone', 'a-.zone', 'a\x00b.zone', 'a0.zone']);
  });
});
