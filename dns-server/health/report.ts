// This replica's probe report (api/probe-report.ts): the prober's view,
// written to a ConfigMap of the records namespace when it changes, at most once
// a second, retried with backoff while the API server does not take it. It
// never holds up an answer: the dns-server chose its answers before the report
// is written, and chooses the same without a Kubernetes API at all.
import type { V1ConfigMap } from '@kubernetes/client-node';
import {
  PROBE_REPORT_KEY,
  PROBE_REPORT_LABEL,
  PROBE_REPORT_MAX_UNHEALTHY,
  probeReportName,
  serializeProbeReport,
  type ProbeReport,
} from '../../api/index.js';
import { Backoff } from '../../runtime/backoff.js';
import type { Logger } from '../../runtime/log.js';

export interface ReportPod {
  namespace: string;
  name: string;
  /** With it the Pod owns the report, and the garbage collector deletes it with the Pod. */
  uid: string | undefined;
}

/** The prober's view as a report: the unhealthy targets, bounded. */
export function reportOf(probing: number, unhealthy: readonly { id: string; since: Date }[]): ProbeReport {
  const sorted = [...unhealthy].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const listed = sorted.slice(0, PROBE_REPORT_MAX_UNHEALTHY);
  return {
    probing,
    unhealthy: listed.map((u) => ({ target: u.id, since: u.since.toISOString() })),
    ...(sorted.length > listed.length ? { omitted: sorted.length - listed.length } : {}),
  };
}

/** The ConfigMap holding a report, as this replica applies it. */
export function reportConfigMap(pod: ReportPod, text: string): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: probeReportName(pod.name),
      namespace: pod.namespace,
      labels: { [PROBE_REPORT_LABEL]: 'true', 'app.kubernetes.io/part-of': 'capi-dns' },
      ...(pod.uid
        ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: pod.name, uid: pod.uid }] }
        : {}),
    },
    data: { [PROBE_REPORT_KEY]: text },
  };
}

export interface ReportWriterOptions {
  /** The ConfigMap holding a report's text, as this replica applies it. */
  configMap: (text: string) => V1ConfigMap;
  /** Server-side apply of the ConfigMap. */
  apply: (configMap: V1ConfigMap) => Promise<void>;
  log: Logger;
  /** Changes of one moment are written once (default 1 s). */
  debounceMs?: number;
  backoff?: Backoff;
  /**
   * Deletes the ConfigMap when the writer stops. Given where no owner will: a replica run without
   * --pod-uid (a process, not a Pod), whose report would otherwise outlive it and go on saying
   * what it no longer serves or sees. A Pod's report goes with the Pod (its owner reference).
   */
  remove?: (configMap: V1ConfigMap) => Promise<void>;
}

/** How long stopping waits for the API server to delete the report: a stop must not hang on it. */
const REMOVE_TIMEOUT_MS = 3000;

/**
 * Writes a report this replica keeps in a ConfigMap of its own: the latest text, once per
 * debounce, only when it differs from what was written, retried with backoff while the API server
 * does not take it (the probe report, health/serial-report.ts's serials).
 */
export class ReportWriter {
  private latest?: string;
  private written?: string;
  private timer?: NodeJS.Timeout;
  private writing = false;
  /** The write under way, which a stop lets finish before deleting what it wrote. */
  private inFlight?: Promise<void>;
  private stopped = false;
  private readonly backoff: Backoff;

  constructor(
    readonly name: string,
    private readonly opts: ReportWriterOptions,
  ) {
    this.backoff = opts.backoff ?? new Backoff({ minMs: 1000, maxMs: 30_000, jitter: 0.2 });
  }

  /** Whether a report was ever written (an empty view need not be, until then). */
  get everWritten(): boolean {
    return this.written !== undefined;
  }

  /** The report now; written after the debounce if it differs from what was written. */
  updateText(text: string): void {
    this.latest = text;
    this.schedule(this.opts.debounceMs ?? 1000);
  }

  /** Writes no more; with `remove`, deletes what was written (a write under way first ends). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    const remove = this.opts.remove;
    if (!remove) return;
    await this.inFlight;
    if (this.written === undefined) return;
    const configMap = this.opts.configMap(this.written);
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        remove(configMap),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer in ${REMOVE_TIMEOUT_MS} ms`)),
            REMOVE_TIMEOUT_MS,
          );
        }),
      ]);
      this.written = undefined;
    } catch (err) {
      this.opts.log.warn(`${this.name} not removed; it stays until deleted`, {
        configMap: `${configMap.metadata?.namespace}/${configMap.metadata?.name}`,
        error: String(err),
      });
    } finally {
      clearTimeout(timer);
    }
  }

  private schedule(ms: number): void {
    if (this.stopped || this.timer || this.writing) return;
    this.timer = setTimeout(() => void this.write(), ms);
    this.timer.unref();
  }

  private write(): Promise<void> {
    this.inFlight = this.writeLatest();
    return this.inFlight;
  }

  private async writeLatest(): Promise<void> {
    this.timer = undefined;
    const text = this.latest;
    if (text === undefined || text === this.written || this.stopped) return;
    this.writing = true;
    const configMap = this.opts.configMap(text);
    try {
      await this.opts.apply(configMap);
      this.written = text;
      this.backoff.reset();
      this.writing = false;
      // A change that came while writing.
      if (this.latest !== this.written) this.schedule(0);
    } catch (err) {
      this.writing = false;
      const retryInMs = this.backoff.next();
      this.opts.log.warn(`${this.name} not written; the answers do not depend on it`, {
        configMap: `${configMap.metadata?.namespace}/${configMap.metadata?.name}`,
        error: String(err),
        retryInMs,
      });
      this.schedule(retryInMs);
    }
  }
}

export interface ProbeReportWriterOptions extends Omit<ReportWriterOptions, 'configMap'> {
  pod: ReportPod;
}

export class ProbeReportWriter {
  readonly name = 'probe-report';
  private readonly writer: ReportWriter;

  constructor(opts: ProbeReportWriterOptions) {
    this.writer = new ReportWriter('probe report', {
      ...opts,
      configMap: (text) => reportConfigMap(opts.pod, text),
    });
  }

  /** The view now; written after the debounce if it differs from what was written. */
  update(report: ProbeReport): void {
    // Nothing probed and nothing ever written: no report to make (most clusters have no checks).
    if (!this.writer.everWritten && report.probing === 0 && !report.unhealthy.length) return;
    this.writer.updateText(serializeProbeReport(report));
  }

  stop(): Promise<void> {
    return this.writer.stop();
  }
}
