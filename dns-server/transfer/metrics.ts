// What transfers and NOTIFY did, for /metrics: results by zone, and per
// secondary the serial it last took and how long it has been behind. The
// counts are this process's (with --workers, the answering processes' transfers
// are not summed in: run transfers with --workers 1, as config/ does).
import { Counter, Gauge, type Registry } from 'prom-client';
import type { TransferImage } from './image.js';
import type { NotifyResult } from './notify.js';
import type { TransferResult } from './transfer-server.js';

interface SecondaryState {
  serial: number;
}

export class TransferMetrics {
  private readonly results = new Map<string, number>();
  private readonly notifies = new Map<string, number>();
  /** By zone, then secondary address: the serial it last took. */
  private readonly secondaries = new Map<string, Map<string, SecondaryState>>();
  /** By zone: each serial served and since when (ms), newest last, bounded. */
  private readonly served = new Map<string, { serial: number; since: number }[]>();

  constructor(private readonly now: () => number = Date.now) {}

  loaded(images: TransferImage[]): void {
    for (const image of images) {
      const history = this.served.get(image.zone) ?? [];
      if (history.at(-1)?.serial !== image.serial) history.push({ serial: image.serial, since: this.now() });
      if (history.length > 1000) history.shift();
      this.served.set(image.zone, history);
      const known = this.secondaries.get(image.zone) ?? new Map<string, SecondaryState>();
      for (const s of image.config.secondaries)
        if (!known.has(s.address)) known.set(s.address, { serial: -1 });
      this.secondaries.set(image.zone, known);
    }
  }

  transfer(zone: string, result: TransferResult, secondary?: string, serial?: number): void {
    const key = `${zone}\n${result}`;
    this.results.set(key, (this.results.get(key) ?? 0) + 1);
    if (secondary !== undefined && serial !== undefined) {
      const state = this.secondaries.get(zone)?.get(secondary);
      if (state) state.serial = serial;
    }
  }

  notify(zone: string, secondary: string, result: NotifyResult): void {
    const key = `${zone}\n${secondary}\n${result}`;
    this.notifies.set(key, (this.notifies.get(key) ?? 0) + 1);
  }

  /** Seconds since the zone first served a serial newer than the secondary's (0: it is current). */
  lagSeconds(zone: string, secondary: string): number {
    const history = this.served.get(zone) ?? [];
    const serial = this.secondaries.get(zone)?.get(secondary)?.serial ?? -1;
    const current = history.at(-1);
    if (!current || current.serial === serial) return 0;
    const at = history.findIndex((h) => h.serial === serial);
    const since = at >= 0 && at + 1 < history.length ? history[at + 1]!.since : history[0]!.since;
    return Math.max(0, (this.now() - since) / 1000);
  }

  register(registry: Registry): void {
    const registers = [registry];
    // prom-client calls collect() with the metric as `this`; these reach the counts.
    const results = this.results;
    const notifies = this.notifies;
    const secondaries = this.secondaries;
    const lag = (zone: string, secondary: string) => this.lagSeconds(zone, secondary);
    new Counter({
      name: 'capi_dns_server_transfers_total',
      help: 'Zone transfer requests over TCP, by zone and result (axfr, ixfr, ixfr_axfr, current, refused, notauth, busy, formerr, abandoned).',
      labelNames: ['zone', 'result'],
      registers,
      collect() {
        this.reset();
        for (const [key, n] of results) {
          const [zone, result] = key.split('\n');
          this.inc({ zone: zone!, result: result! }, n);
        }
      },
    });
    new Counter({
      name: 'capi_dns_server_notifies_total',
      help: 'NOTIFY messages to secondaries, by zone, secondary and result (answered, rejected, failed after every retry).',
      labelNames: ['zone', 'secondary', 'result'],
      registers,
      collect() {
        this.reset();
        for (const [key, n] of notifies) {
          const [zone, secondary, result] = key.split('\n');
          this.inc({ zone: zone!, secondary: secondary!, result: result! }, n);
        }
      },
    });
    new Gauge({
      name: 'capi_dns_server_secondary_serial',
      help: 'The serial a secondary last took from this server (a transfer, or an IXFR that found it current); -1: none yet.',
      labelNames: ['zone', 'secondary'],
      registers,
      collect() {
        this.reset();
        for (const [zone, m] of secondaries)
          for (const [secondary, s] of m) this.set({ zone, secondary }, s.serial);
      },
    });
    new Gauge({
      name: 'capi_dns_server_secondary_lag_seconds',
      help: 'Seconds since this server first served a serial newer than the one a secondary last took; 0 when it is current.',
      labelNames: ['zone', 'secondary'],
      registers,
      collect() {
        this.reset();
        for (const [zone, m] of secondaries)
          for (const secondary of m.keys()) this.set({ zone, secondary }, lag(zone, secondary));
      },
    });
  }
}
