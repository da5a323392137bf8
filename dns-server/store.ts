// Holds the record sets each source delivered last, rebuilds the zones when
// any of them changes (coalescing bursts), bumps the SOA serial when the
// served data really changed, and hands the zones to the responder. A source
// that fails keeps its last delivery: the server goes on answering with it.
import type { Logger } from './log.js';
import type { Metrics } from './metrics.js';
import { buildZones, type Problem, type SourcedRecordSet, type ZoneConfig } from './zone/build.js';
import type { Zone } from './zone/zone.js';

export interface StoreOptions {
  /** Wait this long after a change for more changes before rebuilding. */
  debounceMs: number;
  now?: () => number;
}

export class RecordStore {
  private readonly bySource = new Map<string, SourcedRecordSet[]>();
  private readonly expected = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private fingerprint = '';
  private serial = 0;
  private previousProblems = new Set<string>();
  /** A rebuild has included a delivery of every expected source. */
  private built = false;

  constructor(
    private readonly zones: ZoneConfig[],
    private readonly load: (zones: Zone[]) => void,
    private readonly metrics: Metrics,
    private readonly log: Logger,
    private readonly opts: StoreOptions,
  ) {}

  /** Declares a source that must deliver once before the server is ready. */
  expect(source: string): void {
    this.expected.add(source);
  }

  /** Ready once every declared source delivered and the zones were built from it (for /readyz). */
  get ready(): boolean {
    return this.built;
  }

  /** A source's complete current record sets (not a delta). */
  replace(source: string, sets: SourcedRecordSet[]): void {
    this.bySource.set(source, sets);
    this.metrics.lastSync.set(source, this.now());
    this.schedule();
  }

  /** Builds now, without waiting (start-up, tests). */
  rebuild(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const began = this.now();
    const input = [...this.bySource.values()].flat();
    const complete = [...this.expected].every((s) => this.bySource.has(s));
    const candidate = Math.max(this.serial + 1, Math.floor(began / 1000)) >>> 0;
    const result = buildZones(input, this.zones, candidate);
    this.reportProblems(result.problems);
    this.metrics.recordProblems = result.problems.length;
    if (result.fingerprint === this.fingerprint) {
      this.built ||= complete;
      return;
    }
    this.serial = candidate;
    this.fingerprint = result.fingerprint;
    this.load(result.zones);
    this.built ||= complete;
    this.metrics.records = result.records;
    this.metrics.serial = candidate;
    this.metrics.reloads++;
    this.log.info('zones rebuilt', {
      serial: candidate,
      records: result.records,
      recordSets: input.length,
      skipped: result.problems.length,
      ms: this.now() - began,
    });
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => this.rebuild(), this.opts.debounceMs);
  }

  /** Each problem is logged when it appears, not again on every rebuild while it lasts. */
  private reportProblems(problems: Problem[]): void {
    const now = new Set<string>();
    for (const p of problems) {
      const key = JSON.stringify(p);
      now.add(key);
      if (!this.previousProblems.has(key))
        this.log.warn('record skipped', { source: p.source, record: p.record, reason: p.reason });
    }
    this.previousProblems = now;
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }
}
