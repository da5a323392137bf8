import { CorefileError } from './errors.js';
import { lex } from './lexer.js';

const texts = (source: string): string[] => lex(source).tokens.map((t) => t.text);

describe('lex', () => {
  it('splits on whitespace and keeps offsets and lines', () => {
    const source = '.:53 {\n    forward . 1.1.1.1\n}\n';
    const { tokens } = lex(source);
    expect(tokens.map((t) => [t.text, t.line])).toEqual([
      ['.:53', 1],
      ['{', 1],
      ['forward', 2],
      ['.', 2],
      ['1.1.1.1', 2],
      ['}', 3],
    ]);
    for (const t of tokens) expect(source.slice(t.start, t.end)).toBe(t.text);
  });

  it('takes a comment to the end of the line, also in the middle of a word, as CoreDNS does', () => {
    const { tokens, comments } = lex('forward . 1.1.1.1#upstream }\ncache 30 # { seconds\n');
    expect(tokens.map((t) => t.text)).toEqual(['forward', '.', '1.1.1.1', 'cache', '30']);
    expect(comments.map((c) => [c.text, c.line])).toEqual([
      ['#upstream }', 1],
      ['# { seconds', 2],
    ]);
  });

  it('unquotes quoted tokens, keeps braces in them as text and counts their lines', () => {
    const source = 'log . "{remote} \\"x\\" # not a comment"\n"two\nlines" after\n';
    const { tokens, comments } = lex(source);
    expect(tokens.map((t) => [t.text, t.quoted, t.line])).toEqual([
      ['log', false, 1],
      ['.', false, 1],
      ['{remote} "x" # not a comment', true, 1],
      ['two\nlines', true, 2],
      ['after', false, 3],
    ]);
    expect(comments).toEqual([]);
    const quoted = tokens[2];
    expect(source.slice(quoted?.start, quoted?.end)).toBe('"{remote} \\"x\\" # not a comment"');
  });

  it('treats a quote inside a word as a character, like the Caddyfile lexer', () => {
    expect(texts('a"b c')).toEqual(['a"b', 'c']);
  });

  it('handles CRLF line ends and tabs', () => {
    const { tokens, comments } = lex('.:53 {\r\n\terrors # x\r\n}\r\n');
    expect(tokens.map((t) => [t.text, t.line])).toEqual([
      ['.:53', 1],
      ['{', 1],
      ['errors', 2],
      ['}', 3],
    ]);
    expect(comments[0]?.text).toBe('# x');
  });

  it('keeps environment variables and placeholders as words', () => {
    expect(texts('{$ZONE}:53 {\n forward . {$UPSTREAM} {%WIN%}\n}')).toEqual([
      '{$ZONE}:53',
      '{',
      'forward',
      '.',
      '{$UPSTREAM}',
      '{%WIN%}',
      '}',
    ]);
  });

  it('refuses an unterminated quoted string, naming its line', () => {
    expect(() => lex('.:53 {\n  log . "{remote}\n}\n')).toThrow(
      new CorefileError('Unparseable', 'unterminated quoted string', 2),
    );
    expect(() => lex('"\\"')).toThrow(/line 1: unterminated quoted string/);
  });

  it('returns nothing for an empty or comment-only file', () => {
    expect(lex('')).toEqual({ tokens: [], comments: [] });
    expect(lex('# only\n\n').tokens).toEqual([]);
  });
});
