// This replica's served serials (api/served-serials.ts): the SOA serial of each
// declared zone it serves, written to a ConfigMap of the records namespace when
// a build changes it, at most once a second, with backoff (report.ts's writer).
// The operator shows them in DNSZone status.nameservers[].serial. Event-driven:
// a build that changes nothing served loads nothing, and writes nothing.
import type { V1ConfigMap } from '@kubernetes/client-node';
import {
  SERVED_SERIALS_KEY,
  SERVED_SERIALS_LABEL,
  servedSerialsName,
  serializeServedSerials,
  type ServedSerials,
} from '../../api/index.js';
import { ReportWriter, type ReportPod, type ReportWriterOptions } from './report.js';

/** The ConfigMap holding the serials, as this replica applies it. */
export function servedSerialsConfigMap(pod: ReportPod, text: string): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: servedSerialsName(pod.name),
      namespace: pod.namespace,
      labels: { [SERVED_SERIALS_LABEL]: 'true', 'app.kubernetes.io/part-of': 'capi-dns' },
      ...(pod.uid
        ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: pod.name, uid: pod.uid }] }
        : {}),
    },
    data: { [SERVED_SERIALS_KEY]: text },
  };
}

function normal(zone: string): string {
  return zone.toLowerCase().replace(/\.$/, '');
}

/** The served zones that are declared, each at the serial served (the store has one for all). */
export function servedSerialsOf(
  served: readonly string[],
  declared: readonly string[],
  serial: number,
): ServedSerials {
  const wanted = new Set(declared.map(normal));
  return {
    zones: Object.fromEntries(
      served
        .map(normal)
        .filter((z) => wanted.has(z))
        .map((z) => [z, serial]),
    ),
  };
}

export interface SerialReportWriterOptions extends Omit<ReportWriterOptions, 'configMap'> {
  pod: ReportPod;
}

/**
 * Keeps the report of what was last served and declared: either changing writes it anew. No
 * declared zone and nothing ever written: nothing to write (a flags-only installation gets no
 * object it did not ask for).
 */
export class SerialReportWriter {
  readonly name = 'served-serials';
  private readonly writer: ReportWriter;
  private served: readonly string[] = [];
  private serial?: number;
  private declared: readonly string[] = [];

  constructor(opts: SerialReportWriterOptions) {
    this.writer = new ReportWriter('served serials', {
      ...opts,
      configMap: (text) => servedSerialsConfigMap(opts.pod, text),
    });
  }

  /** A build was loaded: these zones are served at this serial. */
  loaded(zones: readonly string[], serial: number): void {
    this.served = zones;
    this.serial = serial;
    this.update();
  }

  /** The zones declared on the management cluster (names). */
  setDeclared(zones: readonly string[]): void {
    this.declared = zones;
    this.update();
  }

  stop(): Promise<void> {
    return this.writer.stop();
  }

  private update(): void {
    if (this.serial === undefined) return;
    const report = servedSerialsOf(this.served, this.declared, this.serial);
    if (!this.writer.everWritten && !Object.keys(report.zones).length) return;
    this.writer.updateText(serializeServedSerials(report));
  }
}
