// How every component stops: on the first SIGTERM or SIGINT it runs its stop
// function once, then exits; if stopping hangs, it exits anyway after a grace
// period so that a pod is never stuck in Terminating on us.
import type { Logger } from './log.js';

export type Stop = (reason: string, code?: number) => void;

export function stopOnSignals(stop: (reason: string) => Promise<void>, log: Logger, graceMs = 10_000): Stop {
  let stopping = false;
  const run: Stop = (reason, code = 0) => {
    if (stopping) return;
    stopping = true;
    log.info('stopping', { signal: reason });
    setTimeout(() => process.exit(code || 1), graceMs).unref();
    stop(reason)
      .catch((err: unknown) => log.warn('stop failed', { error: err }))
      .finally(() => process.exit(code));
  };
  process.on('SIGTERM', () => run('SIGTERM'));
  process.on('SIGINT', () => run('SIGINT'));
  return run;
}
