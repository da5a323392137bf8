// Standalone mode: DNSRecordSet documents from a YAML file, reloaded when the
// file changes. Polls the file's status rather than using inotify, so that
// editors that replace the file and Kubernetes' ConfigMap symlink swaps are
// both seen. A file that does not parse is reported; the last good records stay.
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { parse } from 'yaml';
import { DNSRECORDSET_KIND, type DNSRecordSet } from '../../api/index.js';
import type { Logger } from '../log.js';
import type { SourcedRecordSet } from '../zone/build.js';

export interface FileSourceOptions {
  path: string;
  pollMs: number;
  onRecords: (source: string, sets: SourcedRecordSet[]) => void;
  onError: (source: string) => void;
  log: Logger;
}

export class FileSource {
  readonly name: string;
  private timer: NodeJS.Timeout | undefined;
  private lastStat = '';
  private lastHash = '';
  private stopped = false;

  constructor(private readonly opts: FileSourceOptions) {
    this.name = `file:${opts.path}`;
  }

  async start(): Promise<void> {
    await this.check();
    this.timer = setInterval(() => void this.check(), this.opts.pollMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
  }

  private async check(): Promise<void> {
    const { path, log } = this.opts;
    let text: string;
    try {
      const s = await stat(path);
      const key = `${s.mtimeMs}/${s.size}/${s.ino}`;
      if (key === this.lastStat) return;
      this.lastStat = key;
      text = await readFile(path, 'utf8');
    } catch (err) {
      if (this.lastStat !== 'missing')
        log.error('cannot read the records file; serving the last records read', {
          source: this.name,
          error: err,
        });
      this.lastStat = 'missing';
      this.opts.onError(this.name);
      return;
    }
    const hash = createHash('sha256').update(text).digest('hex');
    if (hash === this.lastHash || this.stopped) return;
    try {
      const sets = parseRecordsFile(text, this.name, log);
      this.lastHash = hash;
      log.info('records file loaded', { source: this.name, recordSets: sets.length });
      this.opts.onRecords(this.name, sets);
    } catch (err) {
      // Not remembered as loaded: fixing the file, even back to the same good text, reloads it.
      this.lastHash = '';
      log.error('records file is broken; serving the last records read', { source: this.name, error: err });
      this.opts.onError(this.name);
    }
  }
}

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
