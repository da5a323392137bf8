import { silentLogger } from '../../runtime/log.js';
import { parseRecordsFile, splitDocuments } from './records-file.js';

describe('records file parsing', () => {
  it('splits a YAML stream at document markers only', () => {
    expect(splitDocuments('a: 1\n---\nb: 2\n--- {c: 3}\n---\n# only a comment\n---\n')).toEqual([
      'a: 1',
      'b: 2',
      '{c: 3}',
    ]);
    expect(splitDocuments('%YAML 1.2\n---\nx: "---"\ny: |\n  text\n   ---\n')).toEqual([
      'x: "---"\ny: |\n  text\n   ---\n',
    ]);
  });

  it('keeps DNSRecordSets, skips other kinds, and throws on broken YAML', () => {
    const sets = parseRecordsFile(
      'kind: DNSRecordSet\nmetadata: {name: one}\nspec: {records: []}\n---\nkind: ConfigMap\n---\nkind: DNSRecordSet\nspec: {records: []}\n',
      'file:x',
      silentLogger,
    );
    expect(sets.map((s) => s.source)).toEqual(['file:x#one', 'file:x#document-3']);
    expect(() =>
      parseRecordsFile('kind: DNSRecordSet\n---\nspec: [unclosed\n', 'file:x', silentLogger),
    ).toThrow(/document 2/);
  });
});
