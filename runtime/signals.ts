// How every component stops: on the first SIGTERM or SIGINT it runs its stop
// function once, then exits; if stopping hangs, it exits anyway after a grace
// period so that a pod is never stuck in Terminating on us.
//
// A server may ask for a lame-duck period first (CoreDNS's `health { lameduck }`):
// on the signal it turns unready and keeps serving while the endpoint's
// removal reaches every kube-proxy, and only then stops. A second signal
// during that period exits at once.
import type { Logger } from './log.js';

export type Stop = (reason: string, code?: number) => void;

export interface LameDuck {
  ms: number;
  /** Called once when the period begins: turn unready. */
  begin: () => void;
}

export function stopOnSignals(
  stop: (reason: string) => Promise<void>,
  log: Logger,
  graceMs = 10_000,
  lameDuck?: LameDuck,
): Stop {
  let phase: 'running' | 'lame-duck' | 'stopping' = 'running';
  const run: Stop = (reason, code = 0) => {
    if (phase === 'stopping') return;
    phase = 'stopping';
    log.info('stopping', { signal: reason });
    setTimeout(() => process.exit(code || 1), graceMs).unref();
    stop(reason)
      .catch((err: unknown) => log.warn('stop failed', { error: err }))
      .finally(() => process.exit(code));
  };
  const onSignal = (signal: string) => {
    if (phase === 'lame-duck') {
      log.warn('second signal during the lame-duck period: exiting now', { signal });
      process.exit(1);
    }
    if (phase !== 'running') return;
    if (!lameDuck || lameDuck.ms <= 0) return run(signal);
    phase = 'lame-duck';
    log.info('lame duck: unready, still serving', { signal, ms: lameDuck.ms });
    lameDuck.begin();
    setTimeout(() => run(signal), lameDuck.ms).unref();
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  return run;
}
