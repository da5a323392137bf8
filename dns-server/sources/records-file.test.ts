import { silentLogger } from '../../runtime/log.js';
import { ParsedDocuments, parseRecordsFile, splitDocuments } from './records-file.js';

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

  it('parses again only the documents that changed since the build before', () => {
    const documents = new ParsedDocuments();
    const one = 'kind: DNSRecordSet\nmetadata: {name: one}\nspec: {records: []}\n';
    const two = (ip: string) =>
      `kind: DNSRecordSet\nmetadata: {name: two}\nspec: {records: [{name: a.x.test, type: A, values: ["${ip}"]}]}\n`;
    const build = (text: string) => {
      documents.begin();
      return parseRecordsFile(text, 'file:x', silentLogger, documents);
    };
    const first = build(`${one}---\n${two('10.0.0.1')}`);
    const second = build(`${one}---\n${two('10.0.0.2')}`);
    // The same object: not parsed again, and its version tells the build's ParseCache so.
    expect(second[0]!.set).toBe(first[0]!.set);
    expect(second[0]!.version).toBe(first[0]!.version);
    expect(second[1]!.set).not.toBe(first[1]!.set);
    expect(second[1]!.set.spec.records[0]!.values).toEqual(['10.0.0.2']);
    // A build without the document lets it go; a broken document still fails the file.
    build(two('10.0.0.2'));
    expect(build(`${one}---\n${two('10.0.0.2')}`)[0]!.set).not.toBe(first[0]!.set);
    documents.begin();
    expect(() => parseRecordsFile(`${one}---\nspec: [unclosed\n`, 'file:x', silentLogger, documents)).toThrow(
      /document 2/,
    );
  });
});
