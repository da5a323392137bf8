// The records file's format: a YAML stream of DNSRecordSet documents. Used by
// the build (a worker thread), so that the main thread never loads the parser.
import { parse } from 'yaml';
import { DNSRECORDSET_KIND, type DNSRecordSet } from '../../api/index.js';
import type { Logger } from '../../runtime/log.js';
import type { SourcedRecordSet } from '../zone/compile.js';

/**
 * Every DNSRecordSet document of the file; throws on YAML errors, skips (and logs) documents of
 * other kinds. Documents are parsed one at a time: a whole-stream parse of a file with 100,000
 * records holds every document's syntax tree at once, hundreds of megabytes at the peak.
 */
export function parseRecordsFile(text: string, source: string, log: Logger): SourcedRecordSet[] {
  const out: SourcedRecordSet[] = [];
  splitDocuments(text).forEach((docText, i) => {
    let value: unknown;
    try {
      value = parse(docText);
    } catch (err) {
      throw new Error(`document ${i + 1}: ${(err as Error).message}`);
    }
    if (value === null || value === undefined) return; // empty document (a trailing "---")
    const obj = value as Partial<DNSRecordSet>;
    if (typeof value !== 'object' || obj.kind !== DNSRECORDSET_KIND) {
      log.warn('records file: document is not a DNSRecordSet; skipped', { source, document: i + 1 });
      return;
    }
    const name = obj.metadata?.name ?? `document-${i + 1}`;
    out.push({ source: `${source}#${name}`, set: obj as DNSRecordSet });
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
