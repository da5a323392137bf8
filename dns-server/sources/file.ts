// Standalone mode: DNSRecordSet documents from a YAML file, reloaded when the
// file changes. Polls the file's status rather than using inotify, so that
// editors that replace the file and Kubernetes' ConfigMap symlink swaps are
// both seen. The text is handed to the store as is: parsing happens in the build,
// off the main thread. A file that does not parse is reported; the last good records stay.
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import type { Logger } from '../../runtime/log.js';

export interface FileSourceOptions {
  path: string;
  pollMs: number;
  /** The file's whole text when it changed; parsed (and found broken or not) by the build. */
  onText: (source: string, yaml: string) => void;
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
    // Parsed in the build (a worker thread): a broken file is reported there, and the store goes
    // on serving the last text that parsed. Fixing the file changes the hash, which delivers it.
    this.lastHash = hash;
    this.opts.onText(this.name, text);
  }
}
