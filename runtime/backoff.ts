// How long to wait before trying again after a failure: exponential from a
// floor to a ceiling, each wait spread by a random fraction, so that the many
// watches of one process (or the replicas of one Deployment) that lost the same
// API server do not all come back in the same instant.

export interface BackoffOptions {
  /** The wait after the first failure. */
  minMs: number;
  /** No wait is longer (before jitter). */
  maxMs: number;
  /** Each wait is spread by ± this fraction (0.2: 80–120 %); 0 for none. */
  jitter?: number;
}

export class Backoff {
  private failures = 0;

  constructor(
    private readonly opts: BackoffOptions,
    private readonly random: () => number = Math.random,
  ) {}

  /** One more failure: the wait before the next attempt (minMs, doubling up to maxMs, jittered). */
  next(): number {
    this.failures++;
    // The exponent is capped so that a long outage cannot overflow to Infinity.
    const base = Math.min(this.opts.maxMs, this.opts.minMs * 2 ** Math.min(this.failures - 1, 20));
    return jittered(base, this.opts.jitter ?? 0, this.random);
  }

  /** An attempt succeeded (or someone knows the next one will): start from minMs again. */
  reset(): void {
    this.failures = 0;
  }
}

/** `ms` spread uniformly by ± `fraction` of itself. */
export function jittered(ms: number, fraction: number, random: () => number = Math.random): number {
  return ms * (1 - fraction + random() * 2 * fraction);
}
