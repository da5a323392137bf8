// Where builds run. In the server: a worker thread per build (build-worker.ts),
// so that queries are answered from the previous data while it runs and the
// main thread's heap never holds the parsed YAML or the zones' records; the
// worker ends after each build, which returns its heap to the system. Tests
// build in process. This module imports nothing heavy: the main thread never
// loads the YAML parser.
import { Worker } from 'node:worker_threads';
import type { ServedData } from './wire/served.js';
import type { Problem, SourcedRecordSet, ZoneConfig } from './zone/build.js';

/** What one source delivered last: record sets (Kubernetes), or the text of a records file. */
export interface SourceInput {
  source: string;
  sets?: SourcedRecordSet[];
  yaml?: string;
  /** Not yet built once (the build logs "records file loaded" for it). */
  fresh?: boolean;
}

export interface BuildRequest {
  inputs: SourceInput[];
  zones: ZoneConfig[];
  serial: number;
  /** The fingerprint of the data served now: if the build's is the same, nothing is encoded. */
  previousFingerprint: string;
}

export interface LogEntry {
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string;
  fields: Record<string, unknown>;
}

export interface BuildReply {
  /** Undefined if the data did not change (or a records file was broken). */
  served: ServedData | undefined;
  fingerprint: string;
  problems: Problem[];
  records: number;
  recordSets: number;
  /** Records files that did not parse: the build was abandoned. */
  broken: { source: string; error: string }[];
  /** What the build had to say, logged by the caller. */
  logs: LogEntry[];
}

export type Builder = (req: BuildRequest) => Promise<BuildReply>;

/** Builds in this thread (tests; also the fallback when a worker cannot start). */
export const inProcessBuilder: Builder = async (req) => {
  const { runBuild } = await import('./build-run.js');
  return runBuild(req);
};

/** Builds in a fresh worker thread each time. */
export const workerBuilder: Builder = (req) =>
  new Promise<BuildReply>((resolve, reject) => {
    const worker = new Worker(new URL('./build-worker.js', import.meta.url));
    let done = false;
    worker.once('message', (reply: BuildReply) => {
      done = true;
      resolve(reply);
      void worker.terminate();
    });
    worker.once('error', (err) => {
      done = true;
      reject(err);
    });
    worker.once('exit', (code) => {
      if (!done) reject(new Error(`build worker exited (${code}) without a result`));
    });
    worker.postMessage(req);
  });
