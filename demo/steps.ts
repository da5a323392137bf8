// Numbered steps with progress, shared by both walkthroughs (local processes
// in walkthrough.ts, real pods in pods.ts): each step reports its start, its
// time or its failure, and a failure names the step and the log folder.

export type Progress = (event: {
  step: number;
  total: number;
  title: string;
  state: 'start' | 'ok' | 'failed';
  detail?: string;
  ms?: number;
}) => void;

export class StepError extends Error {
  constructor(
    readonly step: string,
    readonly logDir: string,
    cause: Error,
  ) {
    super(`step "${step}" failed: ${cause.message}\nlogs: ${logDir}`);
  }
}

/** Thrown instead of starting a step once the run was interrupted (Ctrl-C). */
export class Interrupted extends Error {
  constructor() {
    super('interrupted');
  }
}

export class StepRunner {
  private stepNo = 0;

  constructor(
    private readonly total: number,
    private readonly logDir: string,
    private readonly progress?: Progress,
    private readonly signal?: AbortSignal,
  ) {}

  async run<T>(title: string, fn: () => Promise<T>): Promise<T> {
    if (this.signal?.aborted) throw new Interrupted();
    const step = ++this.stepNo;
    const total = this.total;
    const began = Date.now();
    this.progress?.({ step, total, title, state: 'start' });
    try {
      const out = await fn();
      this.progress?.({ step, total, title, state: 'ok', ms: Date.now() - began });
      return out;
    } catch (err) {
      // A step cut short by Ctrl-C fails for that reason, not for its own.
      if (this.signal?.aborted) throw new Interrupted();
      this.progress?.({
        step,
        total,
        title,
        state: 'failed',
        detail: (err as Error).message,
        ms: Date.now() - began,
      });
      throw new StepError(title, this.logDir, err as Error);
    }
  }
}

/** The demo's progress lines: `[3/9] title ...`, then `[3/9] ok (12.3 s)` or `[3/9] FAILED: why`. */
export const printProgress: Progress = (e) => {
  const tag = `[${e.step}/${e.total}]`;
  if (e.state === 'start') process.stdout.write(`${tag} ${e.title} ...\n`);
  else if (e.state === 'ok') process.stdout.write(`${tag} ok (${((e.ms ?? 0) / 1000).toFixed(1)} s)\n`);
  else process.stdout.write(`${tag} FAILED: ${e.detail ?? ''}\n`);
};
