// Holds what each source delivered last, rebuilds the served data when any of
// it changes (coalescing bursts; one build at a time, in a worker thread by
// default), bumps the SOA serial when the served data really changed, and
// hands the encoded answers to the responder. A source that fails keeps its
// last good delivery: the server goes on answering with it.
import type { Builder } from '../build/builder.js';
import type { BuildReply, BuildRequest, SourceInput } from '../build/messages.js';
import type { Logger } from '../../runtime/log.js';
import type { Metrics } from '../serve/metrics.js';
import type { ServedData } from '../wire/served.js';
import type { Problem, SourcedRecordSet, ZoneConfig } from '../zone/compile.js';
import type { ProbeTarget } from '../zone/policy.js';

/** The build reports a key it could not parse as this source, followed by the zone. */
const KEY_SOURCE = 'dnssec-key:';

export interface StoreOptions {
  /** Wait this long after a change for more changes before rebuilding. */
  debounceMs: number;
  builder: Builder;
  now?: () => number;
  /** After each build: what the records' traffic policies ask to probe, and the tier answering each policy name. */
  onPolicies?: (targets: ProbeTarget[], answeringTiers: [string, number | null][]) => void;
}

export class RecordStore {
  readonly name = 'records';
  /** Each source's latest delivery. */
  private readonly bySource = new Map<string, SourceInput>();
  /** Each source's last delivery that built (what a broken records file falls back to). */
  private readonly good = new Map<string, SourceInput>();
  private readonly expected = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private fingerprint = '';
  private serial = 0;
  private previousProblems = new Set<string>();
  /** A rebuild has included a delivery of every expected source. */
  private built = false;
  /** The probe targets found unhealthy, as the prober last said. */
  private unhealthy: string[] = [];
  /** Deliveries so far: a build that began after the last one serves every change. */
  private deliveries = 0;

  /** Signing keys by source (ADR 0106), and the timer that builds signed zones again before signatures come due. */
  private readonly keysBySource = new Map<string, NonNullable<BuildRequest['keys']>>();
  private keys: NonNullable<BuildRequest['keys']> = [];
  /** The keys of the last build that succeeded: what a refused key falls back to. */
  private goodKeys = new Map<string, string>();
  private resignTimer: NodeJS.Timeout | undefined;

  /** The zones built: the flags' at first, with those declared through the API (setZones) later. */
  private zones: ZoneConfig[];

  constructor(
    zones: ZoneConfig[],
    private readonly load: (served: ServedData, serial: number) => void,
    private readonly metrics: Metrics,
    private readonly log: Logger,
    private readonly opts: StoreOptions,
  ) {
    this.zones = zones;
  }

  /** The zones to serve changed (a declaration through the API): built again at once, SOA serial bumped. */
  setZones(zones: ZoneConfig[]): void {
    if (JSON.stringify(zones) === JSON.stringify(this.zones)) return;
    this.zones = zones;
    // The fingerprint covers the records: the same records in other zones are a change too.
    this.fingerprint = '';
    this.schedule(0);
  }

  /**
   * The zones' signing keys changed (PKCS#8 PEM): built again at once. A key that does not parse
   * fails the build, and the zones stay served as they were (signed with the previous key, if any).
   */
  setKeys(source: string, keys: NonNullable<BuildRequest['keys']>): void {
    this.keysBySource.set(source, keys);
    // A zone keyed by two sources (a --dnssec-key file and a declaration): the file's, sorted first.
    const byZone = new Map<string, string>();
    for (const [, list] of [...this.keysBySource].sort(([a], [b]) => (a < b ? 1 : -1)))
      for (const k of list) byZone.set(k.zone, k.pem);
    const sorted = [...byZone]
      .map(([zone, pem]) => ({ zone, pem }))
      .sort((a, b) => (a.zone < b.zone ? -1 : 1));
    if (JSON.stringify(sorted) === JSON.stringify(this.keys)) return;
    this.keys = sorted;
    this.schedule(0);
  }

  /** Declares a source that must deliver once before the server is ready. */
  expect(source: string): void {
    this.expected.add(source);
  }

  /** Ready once every declared source delivered and the zones were built from it (for /readyz). */
  ready(): boolean {
    return this.built;
  }

  /**
   * The first build, before any source delivered: SOA and NS (and REFUSED, NXDOMAIN) are served
   * from the first moment, the sources declared so that it does not count as ready.
   */
  start(): Promise<void> {
    return this.rebuild();
  }

  /** A source's complete current record sets (not a delta). */
  replace(source: string, sets: SourcedRecordSet[]): void {
    this.deliver({ source, sets });
  }

  /** The complete text of a records file; it is parsed by the build, and kept only as text. */
  replaceYaml(source: string, yaml: string): void {
    this.deliver({ source, yaml, fresh: true });
  }

  /**
   * The prober's view changed: the answers of the policy names are chosen again, at once (a
   * transition is rare and already waited its thresholds out).
   */
  setUnhealthy(unhealthy: ReadonlySet<string>): void {
    this.unhealthy = [...unhealthy].sort();
    this.schedule(0);
  }

  /** Builds now (start-up, tests); resolves when the build that covers the current deliveries is done. */
  async rebuild(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.running) {
      this.again = true;
      await this.running;
    }
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.again = false;
    this.running = this.buildOnce().finally(() => {
      this.running = undefined;
      if (this.again && !this.stopped) this.schedule(0);
    });
    return this.running;
  }

  stop(): void {
    this.stopped = true;
    if (this.resignTimer) clearTimeout(this.resignTimer);
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.again = false;
  }

  private deliver(input: SourceInput): void {
    this.bySource.set(input.source, input);
    this.deliveries++;
    this.metrics.lastSync.set(input.source, this.now());
    this.metrics.unbuiltSince ??= this.now();
    this.schedule(this.opts.debounceMs);
  }

  private async buildOnce(): Promise<void> {
    const began = this.now();
    const deliveries = this.deliveries;
    const inputs = [...this.bySource.values()];
    const complete = [...this.expected].every((s) => this.bySource.has(s));
    const candidate = Math.max(this.serial + 1, Math.floor(began / 1000)) >>> 0;
    let reply: BuildReply;
    const request: BuildRequest = {
      inputs,
      zones: this.zones,
      serial: candidate,
      previousFingerprint: this.fingerprint,
      unhealthy: this.unhealthy,
      ...(this.keys.length ? { keys: this.keys } : {}),
    };
    try {
      reply = await this.opts.builder(request);
    } catch (err) {
      this.metrics.reloadErrors++;
      this.log.error('zone build failed; serving the previous data', { error: err });
      return;
    }
    for (const l of reply.logs) this.log[l.level](l.msg, l.fields);
    if (reply.broken.length > 0) {
      // Back to the last good text of each broken file, and build again with the others' news.
      for (const { source, error } of reply.broken) {
        if (source.startsWith(KEY_SOURCE)) {
          this.keyRefused(source.slice(KEY_SOURCE.length), error);
          continue;
        }
        this.log.error('records file is broken; serving the last records read', { source, error });
        this.metrics.reloadErrors++;
        const failed = inputs.find((i) => i.source === source);
        if (this.bySource.get(source) !== failed) continue; // already replaced by a newer delivery
        const good = this.good.get(source);
        if (good) this.bySource.set(source, good);
        else this.bySource.delete(source);
      }
      this.again = true;
      return;
    }
    for (const input of inputs) {
      input.fresh = false;
      this.good.set(input.source, input);
    }
    this.goodKeys = new Map(request.keys?.map((k) => [k.zone, k.pem]));
    this.reportProblems(reply.problems);
    this.opts.onPolicies?.(reply.probeTargets, reply.answeringTiers);
    this.metrics.recordProblems = reply.problems.length;
    // Served from now: every change delivered before this build began (a later one waits for the next).
    this.metrics.unbuiltSince = this.deliveries === deliveries ? undefined : began;
    if (!reply.served || reply.fingerprint === this.fingerprint) {
      this.built ||= complete;
      return;
    }
    this.serial = candidate;
    this.fingerprint = reply.fingerprint;
    this.noteSigned(reply);
    this.load(reply.served, candidate);
    this.built ||= complete;
    this.metrics.records = reply.records;
    this.metrics.serial = candidate;
    this.metrics.reloads++;
    this.log.info('zones rebuilt', {
      serial: candidate,
      records: reply.records,
      recordSets: reply.recordSets,
      skipped: reply.problems.length,
      ms: this.now() - began,
    });
  }

  /**
   * A key the build could not parse: the zone goes back to the key it was last signed with (or
   * unsigned, if it never was), so it stays served as it was, until a source delivers another key.
   */
  private keyRefused(zone: string, error: string): void {
    this.log.error('DNSSEC key refused; the zone stays served as it was', { zone, error });
    this.metrics.reloadErrors++;
    const good = this.goodKeys.get(zone);
    this.keys = this.keys.flatMap((k) => (k.zone !== zone ? [k] : good ? [{ zone, pem: good }] : []));
  }

  /** Metrics of the signed zones, and the next build that signs again what comes due. */
  private noteSigned(reply: BuildReply): void {
    this.metrics.dnssec.clear();
    for (const s of reply.signed ?? []) {
      this.metrics.dnssec.set(s.zone, s);
      this.log.info('zone signed', {
        zone: s.zone,
        keyTag: s.keyTag,
        ds: s.ds,
        made: s.made,
        reused: s.reused,
      });
    }
    if (this.resignTimer) clearTimeout(this.resignTimer);
    this.resignTimer = undefined;
    if (!reply.signed?.length || this.stopped) return;
    // The build's fingerprint changes every RESIGN_PERIOD_SECONDS (build/run.ts); a little after that.
    const period = 86400_000;
    const wait = period - (Date.now() % period) + 1000;
    this.resignTimer = setTimeout(() => {
      this.resignTimer = undefined;
      this.schedule(0);
    }, wait);
    this.resignTimer.unref();
  }

  private schedule(ms: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.rebuild();
    }, ms);
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
