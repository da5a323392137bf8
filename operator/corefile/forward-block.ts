// Adds, updates and removes the one server block of a Corefile that capi-dns
// owns: the block forwarding the cross-cluster zone to the cluster's
// dns-server. Pure text in, text out. The text is spliced at the offsets the
// lexer found, so every byte outside the managed block stays as it was.
//
// Ownership is the marker comment on the line before the block. A block that
// serves the zone without the marker was written by a person: it is reported
// as a conflict and never touched.
import { normalizeZone, sameDnsZoneAndPort, type Address } from './address.js';
import { CorefileError } from './errors.js';
import type { Comment } from './lexer.js';
import { parseCorefile, type ParsedCorefile, type ServerBlock } from './parser.js';

export const MARKER =
  '# capi-dns: forward the cross-cluster zone (managed by capi-dns-controller; do not edit)';
/** Any comment starting so is ours, also one a person has edited. */
const MARKER_PREFIX = '# capi-dns:';

export interface PatchResult {
  corefile: string;
  /** False when the result is byte for byte the input: the caller writes nothing then. */
  changed: boolean;
}

interface ManagedBlock {
  marker: Comment;
  block: ServerBlock;
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

/**
 * Makes the Corefile forward `zone` to `targets` (IP or IP:port of the
 * dns-server Service) through the managed block: added at the end when
 * missing, rewritten in place when modified, duplicates removed.
 * @throws CorefileError: `Unparseable`, `Conflict` (another block serves the zone), `InvalidArgument`.
 */
export function ensureForwardBlock(corefile: string, zone: string, targets: string[]): PatchResult {
  const fqdn = checkZone(zone);
  const to = checkTargets(targets);
  const parsed = parseCorefile(corefile);
  const eol = corefile.includes('\r\n') ? '\r\n' : '\n';
  const root = rootBlock(parsed);
  const port = root?.addresses.find(isRoot)?.port;
  const ours: Address = { raw: '', transport: 'dns', zone: fqdn, port };

  const { managed, stray } = findManaged(corefile, parsed, fqdn);
  const managedBlocks = new Set(managed.map((m) => m.block));
  for (const block of parsed.blocks) {
    if (block.snippet || managedBlocks.has(block)) continue;
    const clash = block.addresses.find((a) => sameDnsZoneAndPort(a, ours));
    if (clash) {
      throw new CorefileError(
        'Conflict',
        `server block "${block.keys.map((k) => k.text).join(' ')}" already serves ${clash.raw}; ` +
          `remove it to let capi-dns manage the zone, or opt the cluster out`,
        block.keys[0]?.line,
      );
    }
  }

  const text = renderBlock({
    zone: fqdn.slice(0, -1),
    port,
    bind: root ? bindArgs(root) : [],
    targets: to,
    indent: root ? indentOf(corefile, root) : '    ',
    eol,
  });
  const edits: Edit[] = stray.map((m) => removal(corefile, markerSpan(corefile, m)));
  const [first, ...duplicates] = managed;
  if (first) {
    edits.push({ ...blockSpan(corefile, first), text });
    for (const d of duplicates) edits.push(removal(corefile, blockSpan(corefile, d)));
  } else {
    edits.push({ start: corefile.length, end: corefile.length, text: separatorBefore(corefile, eol) + text });
  }
  return result(corefile, edits);
}

/**
 * Removes the managed block for `zone` (and a marker left without its
 * block). Blocks people wrote are never removed.
 * @throws CorefileError `Unparseable`, `InvalidArgument`.
 */
export function removeForwardBlock(corefile: string, zone: string): PatchResult {
  const fqdn = checkZone(zone);
  const parsed = parseCorefile(corefile);
  const { managed, stray } = findManaged(corefile, parsed, fqdn);
  const edits = [
    ...managed.map((m) => removal(corefile, blockSpan(corefile, m))),
    ...stray.map((m) => removal(corefile, markerSpan(corefile, m))),
  ];
  return result(corefile, edits);
}

function result(corefile: string, edits: Edit[]): PatchResult {
  let out = corefile;
  for (const e of [...edits].sort((a, b) => b.start - a.start)) {
    out = out.slice(0, e.start) + e.text + out.slice(e.end);
  }
  return { corefile: out, changed: out !== corefile };
}

/**
 * Marker comments outside every block: those directly followed by a block
 * serving only `zone` own it; those followed by no block at all are strays
 * left behind when someone deleted the block under them. A marker followed
 * by a block of other zones is left alone: it may be another zone's block.
 */
function findManaged(
  source: string,
  parsed: ParsedCorefile,
  fqdn: string,
): { managed: ManagedBlock[]; stray: Comment[] } {
  const managed: ManagedBlock[] = [];
  const stray: Comment[] = [];
  const blocks = parsed.blocks;
  for (const marker of parsed.comments) {
    if (!marker.text.startsWith(MARKER_PREFIX)) continue;
    if (blocks.some((b) => b.open.start < marker.start && marker.start < b.close.start)) continue;
    const next = blocks.find((b) => (b.keys[0]?.start ?? 0) > marker.end);
    const between = next ? source.slice(marker.end, next.keys[0]?.start) : '';
    const adjacent = next !== undefined && onlyBlankOrComments(between);
    if (!adjacent) {
      const importAfter = parsed.imports.some((args) => (args[0]?.start ?? 0) > marker.end);
      if (!next && !importAfter) stray.push(marker);
      continue;
    }
    if (!next.snippet && next.addresses.length > 0 && next.addresses.every((a) => a.zone === fqdn)) {
      managed.push({ marker, block: next });
    }
  }
  return { managed, stray };
}

function onlyBlankOrComments(text: string): boolean {
  return text.split('\n').every((l) => /^\s*(#.*)?$/.test(l));
}

/** The first block serving the root zone over plain DNS: the one whose port and bind ours follows. */
function rootBlock(parsed: ParsedCorefile): ServerBlock | undefined {
  return parsed.blocks.find((b) => !b.snippet && b.addresses.some(isRoot));
}

function isRoot(a: Address): boolean {
  return a.transport === 'dns' && a.zone === '.';
}

/**
 * Our block listens where the root block listens. With `bind` in the root
 * block and none in ours, ours would listen on every address of the port and
 * queries sent to the bound address would never reach it.
 */
function bindArgs(block: ServerBlock): string[] {
  return block.directives.filter((d) => d.name.text === 'bind').flatMap((d) => d.args.map((a) => a.text));
}

function indentOf(source: string, block: ServerBlock): string {
  const first = block.directives[0];
  if (!first) return '    ';
  const lineStart = source.lastIndexOf('\n', first.name.start - 1) + 1;
  const indent = source.slice(lineStart, first.name.start);
  return /^[ \t]+$/.test(indent) ? indent : '    ';
}

interface BlockText {
  zone: string;
  port: string | undefined;
  bind: string[];
  targets: string[];
  indent: string;
  eol: string;
}

/**
 * No `cache`: the dns-server answers from memory, and a cache here would
 * delay a changed address by up to its TTL. No `reload`: it watches the whole
 * Corefile wherever it is enabled, so the cluster's own block decides.
 */
export function renderBlock(b: BlockText): string {
  const lines = [MARKER, `${b.zone}${b.port === undefined ? '' : `:${b.port}`} {`];
  if (b.bind.length > 0) lines.push(`${b.indent}bind ${b.bind.join(' ')}`);
  lines.push(`${b.indent}forward . ${b.targets.join(' ')}`, '}');
  return lines.map((l) => l + b.eol).join('');
}

/** From the marker's line to the end of the closing brace's line. */
function blockSpan(source: string, m: ManagedBlock): { start: number; end: number } {
  return { start: lineStartIfAlone(source, m.marker.start), end: lineEndIfAlone(source, m.block.close.end) };
}

function markerSpan(source: string, marker: Comment): { start: number; end: number } {
  return { start: lineStartIfAlone(source, marker.start), end: lineEndIfAlone(source, marker.end) };
}

/** Removes a span and, when it stood between blank lines or at the end, the blank line before it. */
function removal(source: string, span: { start: number; end: number }): Edit {
  let start = span.start;
  const before = source.slice(0, start);
  const after = source.slice(span.end);
  const blankBefore = /\r?\n\r?\n$/.exec(before);
  if (blankBefore && (after === '' || /^\r?\n/.test(after))) start -= blankBefore[0].length / 2;
  return { start, end: span.end, text: '' };
}

function lineStartIfAlone(source: string, offset: number): number {
  const lineStart = source.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*$/.test(source.slice(lineStart, offset)) ? lineStart : offset;
}

function lineEndIfAlone(source: string, offset: number): number {
  const nl = source.indexOf('\n', offset);
  const end = nl === -1 ? source.length : nl + 1;
  return /^[ \t\r]*\n?$/.test(source.slice(offset, end)) ? end : offset;
}

/** A blank line between the last block and ours. */
function separatorBefore(source: string, eol: string): string {
  if (source === '') return '';
  return source.endsWith('\n') ? eol : eol + eol;
}

function checkZone(zone: string): string {
  const fqdn = normalizeZone(zone);
  if (fqdn === '.' || !/^([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.)+$/.test(fqdn)) {
    throw new CorefileError('InvalidArgument', `"${zone}" is not a zone capi-dns can forward`);
  }
  return fqdn;
}

function checkTargets(targets: string[]): string[] {
  const unique = [...new Set(targets)];
  if (unique.length === 0) throw new CorefileError('InvalidArgument', 'no forward target');
  for (const t of unique) {
    // An IP or host, optionally with a port; IPv6 bare or in brackets. Nothing
    // that could end the directive or open a block.
    const ok = /^(\[[0-9a-f:.%]+\](:\d{1,5})?|[0-9a-f:.]+|[a-z0-9.-]+(:\d{1,5})?)$/i.test(t);
    if (!ok) throw new CorefileError('InvalidArgument', `"${t}" is not a forward target (IP or IP:port)`);
  }
  return unique;
}
