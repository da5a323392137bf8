// Finds the top-level structure of a Corefile: server blocks (their keys, the
// braces that enclose them, their directives), snippet definitions and
// top-level imports. It checks what a safe splice needs (balanced braces,
// every block introduced by keys) and nothing about plugins: an unknown
// directive is CoreDNS's business, not ours.
import { CorefileError } from './errors.js';
import { lex, type Comment, type Token } from './lexer.js';
import { parseAddress, type Address } from './address.js';

export interface Directive {
  /** The directive's name: the first token of its line inside the block. */
  name: Token;
  /** The tokens after the name on the same line, without a trailing `{`. */
  args: Token[];
  /** The braces of the directive's own block, as in `kubernetes cluster.local {` … `}`. */
  block?: { open: Token; close: Token };
}

export interface ServerBlock {
  keys: Token[];
  /** One per key; a snippet definition has none. */
  addresses: Address[];
  /** A `(name) { … }` snippet definition, which serves nothing until imported. */
  snippet: boolean;
  open: Token;
  close: Token;
  directives: Directive[];
}

export interface ParsedCorefile {
  blocks: ServerBlock[];
  /** The arguments of every `import` outside any block: files or snippets that may hold more server blocks. */
  imports: Token[][];
  comments: Comment[];
}

export function parseCorefile(source: string): ParsedCorefile {
  const { tokens, comments } = lex(source);
  const blocks: ServerBlock[] = [];
  const imports: Token[][] = [];
  let i = 0;

  while (i < tokens.length) {
    const first = tokens[i] as Token;
    if (isWord(first, 'import')) {
      const args = sameLine(tokens, i + 1, first.line);
      if (args.length === 0)
        throw new CorefileError('Unparseable', 'import without a file or snippet', first.line);
      imports.push(args);
      i += 1 + args.length;
      continue;
    }
    if (isBrace(first, '}')) throw new CorefileError('Unparseable', 'unbalanced "}"', first.line);
    if (isBrace(first, '{'))
      throw new CorefileError('Unparseable', 'block without a server address', first.line);

    // Keys run to the end of the line, or on to the next line after a trailing comma.
    const keys: Token[] = [];
    for (;;) {
      const key = tokens[i] as Token;
      keys.push(key);
      i++;
      const next = tokens[i];
      if (!next || isBrace(next, '{') || isBrace(next, '}')) break;
      if (next.line !== key.line && !key.text.endsWith(',')) break;
    }
    const open = tokens[i];
    if (!open || !isBrace(open, '{')) {
      // CoreDNS accepts one brace-less server block for a whole file; a second
      // block appended after it would become part of it, so such a file is refused.
      throw new CorefileError(
        'Unparseable',
        `server block "${keys.map((k) => k.text).join(' ')}" has no braces`,
        (keys[0] as Token).line,
      );
    }
    const body = parseBody(tokens, i + 1, open);
    const snippet = keys.length === 1 && /^\(.*\)$/.test((keys[0] as Token).text);
    blocks.push({
      keys,
      addresses: snippet ? [] : keys.map((k) => parseAddress(k.text.replace(/,$/, ''))),
      snippet,
      open,
      close: body.close,
      directives: body.directives,
    });
    i = body.next;
  }
  return { blocks, imports, comments };
}

interface Body {
  directives: Directive[];
  close: Token;
  /** Index of the first token after the closing brace. */
  next: number;
}

function parseBody(tokens: Token[], from: number, open: Token): Body {
  const directives: Directive[] = [];
  let i = from;
  for (;;) {
    const tok = tokens[i];
    if (!tok) throw new CorefileError('Unparseable', 'block is never closed: missing "}"', open.line);
    if (isBrace(tok, '}')) return { directives, close: tok, next: i + 1 };
    if (isBrace(tok, '{')) {
      // Caddy lets a directive's block open on the next line.
      const previous = directives[directives.length - 1];
      if (!previous || previous.block)
        throw new CorefileError('Unparseable', '"{" without a directive', tok.line);
      previous.block = { open: tok, close: skipNested(tokens, i + 1, tok) };
      i = tokens.indexOf(previous.block.close, i) + 1;
      continue;
    }

    const line = sameLine(tokens, i + 1, tok.line);
    const last = line[line.length - 1];
    const directive: Directive = { name: tok, args: line };
    i += 1 + line.length;
    if (last && isBrace(last, '{')) {
      directive.args = line.slice(0, -1);
      directive.block = { open: last, close: skipNested(tokens, i, last) };
      i = tokens.indexOf(directive.block.close, i) + 1;
    }
    directives.push(directive);
  }
}

/** Tokens after index `from` that start on `line`, stopping before any `}` (it closes something). */
function sameLine(tokens: Token[], from: number, line: number): Token[] {
  const out: Token[] = [];
  for (let i = from; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    if (t.line !== line || isBrace(t, '}')) break;
    out.push(t);
    if (isBrace(t, '{')) break;
  }
  return out;
}

/** The `}` that closes the nested block opened by `open`, whose contents start at `from`. */
function skipNested(tokens: Token[], from: number, open: Token): Token {
  let depth = 1;
  for (let i = from; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    if (isBrace(t, '{')) depth++;
    else if (isBrace(t, '}')) {
      depth--;
      if (depth === 0) return t;
    }
  }
  throw new CorefileError('Unparseable', 'block is never closed: missing "}"', open.line);
}

/** A brace is a token of its own; `{$VAR}` and a quoted "{" are words. */
export function isBrace(t: Token, brace: '{' | '}'): boolean {
  return !t.quoted && t.text === brace;
}

function isWord(t: Token, word: string): boolean {
  return !t.quoted && t.text === word;
}
