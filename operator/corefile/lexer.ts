// Splits a Corefile into tokens and comments with their byte offsets, by the
// rules of the Caddyfile lexer that CoreDNS uses (github.com/coredns/caddy,
// caddyfile/lexer.go): tokens are separated by whitespace; `#` starts a
// comment up to the end of the line, even in the middle of a word; a `"` at
// the start of a token quotes it up to the next unescaped `"`, across lines,
// and `\"` is the only escape. Offsets let the transform splice the text
// without re-printing it, so every byte it does not own stays as it was.
import { CorefileError } from './errors.js';

export interface Token {
  /** The token's value: quotes removed, `\"` unescaped, as CoreDNS sees it. */
  text: string;
  /** Offset of the first character (the opening quote for a quoted token). */
  start: number;
  /** Offset just past the last character (past the closing quote). */
  end: number;
  /** 1-based line of the first character. */
  line: number;
  quoted: boolean;
}

export interface Comment {
  /** The comment including its `#`, without the line break. */
  text: string;
  start: number;
  end: number;
  line: number;
}

export interface Lexed {
  tokens: Token[];
  comments: Comment[];
}

export function lex(source: string): Lexed {
  const tokens: Token[] = [];
  const comments: Comment[] = [];
  let line = 1;
  let i = 0;
  const n = source.length;

  while (i < n) {
    const ch = source[i] as string;
    if (ch === '\n') {
      line++;
      i++;
      continue;
    }
    if (isSpace(ch)) {
      i++;
      continue;
    }
    if (ch === '#') {
      const end = lineEnd(source, i);
      comments.push({ text: source.slice(i, end).replace(/\r$/, ''), start: i, end, line });
      i = end;
      continue;
    }
    if (ch === '"') {
      const startLine = line;
      let text = '';
      let j = i + 1;
      let closed = false;
      while (j < n) {
        const c = source[j] as string;
        if (c === '\\' && source[j + 1] === '"') {
          text += '"';
          j += 2;
          continue;
        }
        if (c === '"') {
          closed = true;
          j++;
          break;
        }
        if (c === '\n') line++;
        text += c;
        j++;
      }
      // CoreDNS would take the rest of the file as one token here; a patch
      // placed after it would be swallowed, so refuse instead.
      if (!closed) throw new CorefileError('Unparseable', 'unterminated quoted string', startLine);
      tokens.push({ text, start: i, end: j, line: startLine, quoted: true });
      i = j;
      continue;
    }
    let j = i;
    while (j < n) {
      const c = source[j] as string;
      if (isSpace(c) || c === '\n' || c === '#') break;
      j++;
    }
    tokens.push({ text: source.slice(i, j), start: i, end: j, line, quoted: false });
    i = j;
  }
  return { tokens, comments };
}

function isSpace(ch: string): boolean {
  // Go's unicode.IsSpace minus the newline, which the lexer counts.
  return ch === ' ' || ch === '\t' || ch === '\r' || ch === '\v' || ch === '\f' || ch === '\u00a0';
}

function lineEnd(source: string, from: number): number {
  const nl = source.indexOf('\n', from);
  return nl === -1 ? source.length : nl;
}
