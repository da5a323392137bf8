// Where builds run. In the server: a worker thread (worker.ts), so that
// queries are answered from the previous data while it runs and the main
// thread's heap never holds the parsed YAML or the zones' records; the worker
// ends when builds stop coming, which returns its heap to the system. Tests
// build in process. This module imports nothing heavy: the main thread never
// loads the YAML parser.
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../runtime/log.js';
import { isHeapReport, type BuildReply, type BuildRequest, type BuildThreadMessage } from './messages.js';
import type { ParseCache } from '../zone/compile.js';
import type { SignatureCache } from '../dnssec/rrsig.js';
import type { ParsedDocuments } from '../sources/records-file.js';

export type Builder = (req: BuildRequest) => Promise<BuildReply>;

/** Builds in this thread (tests; also the fallback when a worker cannot start). */
export function inProcessBuilder(): Builder {
  let cache: ParseCache | undefined;
  let signatures: SignatureCache | undefined;
  let documents: ParsedDocuments | undefined;
  return async (req) => {
    const { runBuild } = await import('./run.js');
    const { ParseCache } = await import('../zone/compile.js');
    const { SignatureCache } = await import('../dnssec/rrsig.js');
    const { ParsedDocuments } = await import('../sources/records-file.js');
    cache ??= new ParseCache();
    signatures ??= new SignatureCache();
    documents ??= new ParsedDocuments();
    return runBuild(req, cache, signatures, documents);
  };
}

/**
 * Builds in one worker thread, kept while builds keep coming and ended after `idleMs` without
 * one, because a fresh thread per build costs 300–600 ms for 1,000 records on a busy 2-core
 * machine, against 30–60 ms in a warm one: V8 compiles the build code again in every new thread,
 * and the warm one also keeps the parsed record sets (../zone/compile.ts ParseCache) and a records
 * file's parsed documents. Ending it when idle still returns its heap to the system between
 * bursts; `idleMs` 0 ends it after every build, and so does a live heap above MAX_WARM_HEAP_BYTES
 * after the build (worker.ts collects the build's garbage first, after the reply, and reports the
 * heap in a message of its own; a zone of 20,000 records leaves about 25 MB live): memory first, as
 * ADR 0101 decided for the largest zones (ADR 0103).
 */
/** Largest live heap a build thread may hold while it waits for the next build (see WorkerBuilder). */
export const MAX_WARM_HEAP_BYTES = 64 * 2 ** 20;

/**
 * The build thread's young generation, in MiB. V8 sizes it from the machine (up to 48 MiB per
 * isolate here), and a build allocates fast enough to fill it: with 100,000 records that space is
 * resident at the peak on top of the data. Small young spaces cost a few more scavenges per build.
 */
const BUILD_YOUNG_GENERATION_MIB = 4;

/** A build that needed more heap than --build-heap-limit: it is not tried again in the main thread. */
export class BuildHeapLimitError extends Error {
  constructor(readonly limitMiB: number) {
    super(
      `the zone build needed more than --build-heap-limit ${limitMiB}Mi of heap; ` +
        'serving the last data built (raise the limit, and the memory limit of the pod with it)',
    );
  }
}

export interface WorkerBuilderOptions {
  /** End the thread after this long without a build (0: after every build). */
  idleMs: number;
  /** The thread's old-generation heap limit (V8's resourceLimits.maxOldGenerationSizeMb). */
  heapLimitMiB: number;
}

export class WorkerBuilder {
  readonly name = 'build-worker';
  private worker: Worker | undefined;
  private idle: NodeJS.Timeout | undefined;
  /** Builds run one at a time: the worker answers requests in order, one reply each. */
  private queue: Promise<unknown> = Promise.resolve();
  private building = false;

  private readonly idleMs: number;

  constructor(
    private readonly opts: WorkerBuilderOptions,
    private readonly log: Logger,
  ) {
    this.idleMs = opts.idleMs;
  }

  readonly build: Builder = (req) => {
    const run = this.queue.then(() => this.buildNow(req));
    this.queue = run.catch(() => undefined);
    return run;
  };

  /** Ends the worker (when idle, and on shutdown). */
  async stop(): Promise<void> {
    if (this.idle) clearTimeout(this.idle);
    this.idle = undefined;
    const worker = this.worker;
    this.worker = undefined;
    if (!worker) return;
    this.log.debug('build worker ended', { idleMs: this.idleMs });
    await worker.terminate();
  }

  private buildNow(req: BuildRequest): Promise<BuildReply> {
    if (this.idle) clearTimeout(this.idle);
    this.idle = undefined;
    const worker = (this.worker ??= this.startWorker());
    // Held only while building: an idle worker must not keep the process alive.
    worker.ref();
    this.building = true;
    return new Promise<BuildReply>((resolve, reject) => {
      const settle = () => {
        this.building = false;
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      const onMessage = (message: BuildThreadMessage) => {
        // The heap report of the build before (startWorker's listener takes it), not this reply.
        if (isHeapReport(message)) return;
        settle();
        worker.unref();
        // Kept until the heap report that follows says otherwise (onHeapReport).
        this.idle = setTimeout(() => void this.stop(), this.idleMs);
        this.idle.unref();
        resolve(message);
      };
      const onError = (err: Error & { code?: string }) => {
        settle();
        this.forget(worker);
        reject(
          err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? new BuildHeapLimitError(this.opts.heapLimitMiB) : err,
        );
      };
      const onExit = (code: number) => {
        settle();
        this.forget(worker);
        reject(new Error(`build worker exited (${code}) without a result`));
      };
      worker.on('message', onMessage);
      worker.once('error', onError);
      worker.once('exit', onExit);
      worker.postMessage(req);
    });
  }

  private startWorker(): Worker {
    const worker = new Worker(new URL('./worker.js', import.meta.url), {
      resourceLimits: {
        maxOldGenerationSizeMb: this.opts.heapLimitMiB,
        maxYoungGenerationSizeMb: BUILD_YOUNG_GENERATION_MIB,
      },
    });
    this.log.debug('build worker started', { heapLimitMiB: this.opts.heapLimitMiB });
    // Between builds too: an error or exit while idle must not throw in this thread, only retire it.
    // (An error during a build is the build's error: the caller logs it.)
    worker.on('error', (err) => {
      if (!this.building)
        this.log.warn('idle build worker failed; the next build starts another', { error: err });
      this.forget(worker);
    });
    worker.on('exit', () => this.forget(worker));
    worker.on('message', (message: BuildThreadMessage) => {
      if (isHeapReport(message)) this.onHeapReport(worker, message.workerHeapBytes);
    });
    return worker;
  }

  /**
   * A large zone's build leaves a heap of hundreds of megabytes that V8 is slow to give back
   * (100,000 records: 300 MB after one build, 600 MB after three): such a thread is not kept, unless
   * the next build already runs in it (it reports again after that one).
   */
  private onHeapReport(worker: Worker, heapBytes: number): void {
    if (heapBytes <= MAX_WARM_HEAP_BYTES || this.building || this.worker !== worker) return;
    if (this.idle) clearTimeout(this.idle);
    this.idle = setTimeout(() => void this.stop(), 0);
    this.idle.unref();
  }

  /** A worker that failed is not used again; the next build starts another. */
  private forget(worker: Worker): void {
    if (this.worker === worker) this.worker = undefined;
    void worker.terminate();
  }
}

/** Builds in a worker thread; in this thread if a worker cannot be started. */
export function fallingBack(builds: WorkerBuilder, log: Logger): Builder {
  const inProcess = inProcessBuilder();
  return async (req) => {
    try {
      return await builds.build(req);
    } catch (err) {
      // The same build in the main thread would take the same memory, without a limit but the pod's.
      if (err instanceof BuildHeapLimitError) throw err;
      log.warn('build worker failed; building in the main thread', { error: err });
      return inProcess(req);
    }
  };
}
