import { countOf, describedFirst, namedFirst, truncateText } from './summary.js';

describe('truncateText', () => {
  it.each<[string, string, number, string]>([
    ['short text stays', 'refused', 16, 'refused'],
    ['exactly at the limit stays', 'abcd', 4, 'abcd'],
    ['cut with an ellipsis within the limit', 'abcdefgh', 6, 'abc…'],
    ['never inside a character', 'ééééé', 7, 'éé…'],
    ['no room for anything', 'abcdef', 2, ''],
  ])('%s', (_name, text, max, want) => {
    const got = truncateText(text, max);
    expect(got).toBe(want);
    expect(Buffer.byteLength(got, 'utf8')).toBeLessThanOrEqual(max);
  });

  it('keeps a 1 MB error within the limit', () => {
    expect(Buffer.byteLength(truncateText('x'.repeat(1 << 20), 512), 'utf8')).toBe(512);
  });
});

describe('summaries name the first few and count the rest', () => {
  it.each<[string[], string]>([
    [[], ''],
    [['c001'], 'c001'],
    [['c001', 'c007', 'c013'], 'c001, c007, c013'],
    [['c001', 'c007', 'c013', 'c014'], 'c001, c007, c013 and 1 more'],
    [Array.from({ length: 40 }, (_, i) => `c${i}`), 'c0, c1, c2 and 37 more'],
  ])('namedFirst(%j)', (items, want) => expect(namedFirst(items)).toBe(want));

  it('describedFirst joins sentences with semicolons', () => {
    expect(describedFirst(['a (x)', 'b (y)', 'c (z)', 'd (w)'])).toBe('a (x); b (y); c (z); and 1 more');
  });

  it('countOf', () => {
    expect(countOf(3, 40, 'cluster')).toBe('3 of 40 clusters');
    expect(countOf(1, 1, 'cluster')).toBe('1 of 1 cluster');
  });
});
