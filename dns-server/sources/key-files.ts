// Standalone signing keys (--dnssec-key ZONE=FILE, ADR 0106): the files'
// PEM text, polled like the records file and handed to the store when any
// changed. The keys are parsed by the build; one that does not parse leaves the
// zones served as they were. A file that cannot be read keeps its last text.
import { readFile } from 'node:fs/promises';
import type { Logger } from '../../runtime/log.js';

export interface KeyFilesOptions {
  files: { zone: string; file: string }[];
  pollMs: number;
  onKeys: (keys: { zone: string; pem: string }[]) => void;
  onError: () => void;
  log: Logger;
}

export class KeyFileSource {
  readonly name = 'dnssec-key-files';
  private timer: NodeJS.Timeout | undefined;
  private readonly last = new Map<string, string>();
  private delivered = '';

  constructor(private readonly opts: KeyFilesOptions) {}

  async start(): Promise<void> {
    await this.check();
    this.timer = setInterval(() => void this.check(), this.opts.pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private async check(): Promise<void> {
    for (const { zone, file } of this.opts.files) {
      try {
        this.last.set(zone, await readFile(file, 'utf8'));
      } catch (err) {
        if (!this.last.has(zone) || this.delivered !== 'error')
          this.opts.log.error('cannot read the DNSSEC key file; signing with the last key read', {
            zone,
            file,
            error: err,
          });
        this.opts.onError();
      }
    }
    const keys = [...this.last].map(([zone, pem]) => ({ zone, pem }));
    const key = JSON.stringify(keys);
    if (key === this.delivered) return;
    this.delivered = key;
    this.opts.onKeys(keys);
  }
}
