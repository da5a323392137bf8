// What the main thread and the build thread send each other, in one place
// that imports no code: the build thread (worker.ts, running run.ts) and the
// main thread that asks it (builder.ts, ../store/record-store.ts). The
// primary and its answering processes have theirs in ../serve/messages.ts.
import type { ServedData } from '../wire/served.js';
import type { Problem, SourcedRecordSet, ZoneConfig } from '../zone/compile.js';
import type { ProbeTarget } from '../zone/policy.js';

/** What one source delivered last: record sets (Kubernetes), or the text of a records file. */
export interface SourceInput {
  source: string;
  sets?: SourcedRecordSet[];
  yaml?: string;
  /** Not yet built once (the build logs "records file loaded" for it). */
  fresh?: boolean;
}

/** Main thread → build thread: one build. */
export interface BuildRequest {
  inputs: SourceInput[];
  zones: ZoneConfig[];
  serial: number;
  /** The fingerprint of the data served now: if the build's is the same, nothing is encoded. */
  previousFingerprint: string;
  /** The probe targets this dns-server's probes find unhealthy now (traffic policy). */
  unhealthy: string[];
  /** Signing keys (PKCS#8 PEM) of the zones signed (ADR 0106); zones without one are served unsigned. */
  keys?: { zone: string; pem: string }[];
}

export interface LogEntry {
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string;
  fields: Record<string, unknown>;
}

/** Build thread → main thread: the result of one build. */
export interface BuildReply {
  /** Undefined if the data did not change (or a records file was broken). */
  served: ServedData | undefined;
  fingerprint: string;
  problems: Problem[];
  records: number;
  recordSets: number;
  /** Records files that did not parse: the build was abandoned. */
  broken: { source: string; error: string }[];
  /** What the records' traffic policies ask to probe. */
  probeTargets: ProbeTarget[];
  /** Per policy name and type, the tier that answers (null: none healthy). */
  answeringTiers: [string, number | null][];
  /** What the build had to say, logged by the caller. */
  logs: LogEntry[];
  /** Per signed zone: the key tag, the DS and the earliest expiration of its signatures (Unix seconds). */
  signed?: { zone: string; keyTag: number; ds: string; expires: number; made: number; reused: number }[];
}

/**
 * Build thread → main thread, after each BuildReply: the thread's heap once the build's garbage is
 * collected (worker.ts). Sent after the reply so that the collection is not on the way of a change
 * to the answers; the main thread decides on it whether to keep the thread (builder.ts).
 */
export interface HeapReport {
  kind: 'heap';
  workerHeapBytes: number;
}

export type BuildThreadMessage = BuildReply | HeapReport;

export function isHeapReport(m: BuildThreadMessage): m is HeapReport {
  return (m as Partial<HeapReport>).kind === 'heap';
}
