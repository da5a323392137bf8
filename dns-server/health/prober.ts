// Active health checks of the addresses the records' traffic policies name,
// from this cluster, as Envoy's active health checker and kubelet's probes make
// them: each target (an address and its check, deduplicated) is probed every
// period with jitter, at most `maxInFlight` probes at once; its state changes
// only after failureThreshold failures or successThreshold successes in a row
// (hysteresis). A new target counts as healthy until its failures say
// otherwise (fail open: a restart does not empty the answers). The probe
// results never touch the hot path: a transition hands the new set of
// unhealthy targets to the store, which chooses the answers again.
import { connect } from 'node:net';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Logger } from '../../runtime/log.js';
import type { ProbeTarget } from '../zone/policy.js';

export interface ProberOptions {
  /** Probes in flight at most; the others wait their turn (a late probe is still a probe). */
  maxInFlight: number;
  onChange: (unhealthy: ReadonlySet<string>) => void;
  log: Logger;
  /** A probe, replaceable in tests; the real one by default. */
  probe?: (target: ProbeTarget) => Promise<boolean>;
}

interface TargetState {
  target: ProbeTarget;
  healthy: boolean;
  successes: number;
  failures: number;
  /** When it turned unhealthy. */
  since?: Date;
  timer?: NodeJS.Timeout;
}

export interface ProberStats {
  targets: number;
  unhealthy: number;
  probes: { success: number; failure: number };
  transitions: { healthy: number; unhealthy: number };
}

export class Prober {
  readonly name = 'prober';
  private readonly states = new Map<string, TargetState>();
  private readonly unhealthy = new Set<string>();
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];
  private changePending = false;
  private stopped = false;
  readonly stats: ProberStats = {
    targets: 0,
    unhealthy: 0,
    probes: { success: 0, failure: 0 },
    transitions: { healthy: 0, unhealthy: 0 },
  };

  constructor(private readonly opts: ProberOptions) {}

  /** The targets the records ask for now: new ones start, gone ones stop (and are forgotten). */
  setTargets(targets: readonly ProbeTarget[]): void {
    if (this.stopped) return;
    const wanted = new Map(targets.map((t) => [t.id, t]));
    let changed = false;
    for (const [id, state] of this.states)
      if (!wanted.has(id)) {
        clearTimeout(state.timer);
        this.states.delete(id);
        changed = this.unhealthy.delete(id) || changed;
      }
    for (const [id, target] of wanted) {
      if (this.states.has(id)) continue;
      const state: TargetState = { target, healthy: true, successes: 0, failures: 0 };
      this.states.set(id, state);
      // Spread over the first period, so that many targets added at once are not probed at once.
      this.schedule(state, Math.random() * target.check.periodSeconds * 1000);
    }
    this.stats.targets = this.states.size;
    if (changed) this.changed();
  }

  stop(): void {
    this.stopped = true;
    for (const s of this.states.values()) clearTimeout(s.timer);
    this.states.clear();
  }

  private schedule(state: TargetState, ms: number): void {
    state.timer = setTimeout(() => void this.run(state), ms);
    state.timer.unref();
  }

  private async run(state: TargetState): Promise<void> {
    await this.slot();
    let ok = false;
    try {
      ok = await (this.opts.probe ?? probe)(state.target);
    } catch (err) {
      this.opts.log.debug('probe failed', { target: state.target.id, error: String(err) });
    } finally {
      this.release();
    }
    if (this.stopped || this.states.get(state.target.id) !== state) return;
    this.record(state, ok);
    // ±10 % jitter each period: targets that started together drift apart.
    const period = state.target.check.periodSeconds * 1000;
    this.schedule(state, period * (0.9 + Math.random() * 0.2));
  }

  private record(state: TargetState, ok: boolean): void {
    const check = state.target.check;
    if (ok) {
      this.stats.probes.success++;
      state.failures = 0;
      state.successes++;
      if (!state.healthy && state.successes >= check.successThreshold) this.flip(state, true);
    } else {
      this.stats.probes.failure++;
      state.successes = 0;
      state.failures++;
      if (state.healthy && state.failures >= check.failureThreshold) this.flip(state, false);
    }
  }

  /** The unhealthy targets and since when, for the probe report. */
  unhealthyTargets(): { id: string; since: Date }[] {
    return [...this.unhealthy].map((id) => ({ id, since: this.states.get(id)?.since ?? new Date(0) }));
  }

  private flip(state: TargetState, healthy: boolean): void {
    state.healthy = healthy;
    state.since = healthy ? undefined : new Date();
    const id = state.target.id;
    if (healthy) this.unhealthy.delete(id);
    else this.unhealthy.add(id);
    this.stats.unhealthy = this.unhealthy.size;
    this.stats.transitions[healthy ? 'healthy' : 'unhealthy']++;
    this.opts.log.info(healthy ? 'probe target healthy' : 'probe target unhealthy', {
      target: id,
      address: state.target.address,
    });
    this.changed();
  }

  /** Transitions of one moment reach the store once. */
  private changed(): void {
    if (this.changePending) return;
    this.changePending = true;
    queueMicrotask(() => {
      this.changePending = false;
      if (!this.stopped) this.opts.onChange(new Set(this.unhealthy));
    });
  }

  private async slot(): Promise<void> {
    if (this.inFlight < this.opts.maxInFlight) {
      this.inFlight++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.inFlight--;
  }
}

/**
 * One probe, as kubelet's: TCP succeeds when the connection opens; HTTP(S) when a GET answers
 * 200-399 within the timeout (no body is read; HTTPS verifies no certificate, as Route53's and
 * kubelet's do not).
 */
export function probe(target: ProbeTarget): Promise<boolean> {
  const { address, check } = target;
  const timeoutMs = check.timeoutSeconds * 1000;
  return new Promise<boolean>((resolve) => {
    let done = false;
    const finish = (ok: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      cleanup();
      resolve(ok);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    let cleanup: () => void = () => undefined;
    if (check.protocol === 'TCP') {
      const socket = connect({ host: address, port: check.port });
      socket.once('connect', () => finish(true));
      socket.once('error', () => finish(false));
      cleanup = () => socket.destroy();
      return;
    }
    const request = check.protocol === 'HTTPS' ? httpsRequest : httpRequest;
    const req = request({
      host: address,
      port: check.port,
      path: check.path ?? '/',
      method: 'GET',
      agent: false,
      headers: {
        Host: check.host ?? address,
        'User-Agent': 'capi-dns-server/health-check',
        Connection: 'close',
      },
      ...(check.protocol === 'HTTPS'
        ? { rejectUnauthorized: false, ...(check.host ? { servername: check.host } : {}) }
        : {}),
    });
    req.once('response', (res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      finish(status >= 200 && status < 400);
    });
    req.once('error', () => finish(false));
    req.end();
    cleanup = () => req.destroy();
  });
}
