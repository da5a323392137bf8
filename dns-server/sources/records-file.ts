// The records file's format: a YAML stream of DNSRecordSet documents. Used by
// the build (a worker thread), so that the main thread never loads the parser.
import { parse } from 'yaml';
import { DNSRECORDSET_KIND, type DNSRecordSet } from '../../api/index.js';
import type { Logger } from '../../runtime/log.js';
import type { SourcedRecordSet } from '../zone/compile.js';

/**
 * The documents of the last build's records files, parsed, by their text: a build parses only the
 * documents that changed since (with 20,000 records, YAML parsing was three quarters of a build).
 * Documents no build sees again are let go at the next `begin`.
 */
export class ParsedDocuments {
  private last = new Map<string, unknown>();
  private next = new Map<string, unknown>();

  /** Before each build: what the build before it parsed is what this one may reuse. */
  begin(): void {
    if (this.next.size > 0) this.last = this.next;
    this.next = new Map();
  }

  /** The document's value; throws on YAML errors. */
  parse(docText: string): unknown {
    const value = this.next.has(docText)
      ? this.next.get(docText)
      : this.last.has(docText)
        ? this.last.get(docText)
        : (parse(docText) ?? null);
    this.next.set(docText, value);
    return value;
  }
}

/**
 * Every DNSRecordSet document of the file; throws on YAML errors, skips (and logs) documents of
 * other kinds. Documents are parsed one at a time: a whole-stream parse of a file with 100,000
 * records holds every document's syntax tree at once, hundreds of megabytes at the peak. Each set's
 * version is its document's text, so that the build's ParseCache validates only changed documents.
 */
export function parseRecordsFile(
  text: string,
  source: string,
  log: Logger,
  documents: ParsedDocuments = new ParsedDocuments(),
): SourcedRecordSet[] {
  const out: SourcedRecordSet[] = [];
  splitDocuments(text).forEach((docText, i) => {
    let value: unknown;
    try {
      value = documents.parse(docText);
    } catch (err) {
      throw new Error(`document ${i + 1}: ${(err as Error).message}`);
    }
    if (value === null) return; // empty document (a trailing "---")
    const obj = value as Partial<DNSRecordSet>;
    if (typeof value !== 'object' || obj.kind !== DNSRECORDSET_KIND) {
      log.warn('records file: document is not a DNSRecordSet; skipped', { source, document: i + 1 });
      return;
    }
    const name = obj.metadata?.name ?? `document-${i + 1}`;
    out.push({ source: `${source}#${name}`, set: obj as DNSRecordSet, version: docText });
  });
  return out;
}

/**
 * Splits a YAML stream at its document markers. YAML 1.2 section 9.1.2 forbids "---" at the start
 * of a line inside any content, so such a line always begins a new document; what follows the
 * marker on its line belongs to the new document.
 */
export function splitDocuments(text: string): string[] {
  const docs: string[] = [];
  let current: string[] = [];
  for (const line of text.split('\n')) {
    const marker = /^---(?:[ \t](.*))?\r?$/.exec(line);
    if (marker) {
      docs.push(current.join('\n'));
      current = marker[1] ? [marker[1]] : [];
    } else current.push(line);
  }
  docs.push(current.join('\n'));
  // Chunks of only blank lines, comments or directives ("%YAML 1.2" before the first marker) are no documents.
  return docs.filter((d) =>
    d.split('\n').some((l) => l.trim() !== '' && !l.trimStart().startsWith('#') && !l.startsWith('%')),
  );
}
