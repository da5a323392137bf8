// A cheap readiness probe of a workload cluster's API server, run while the
// cluster is unreachable (after Cluster API's clustercache health probe). The
// watches back off up to seconds between attempts, so on their own they would
// notice a cluster that is back only at their next attempt; one small GET
// /readyz per interval tells as soon as it answers, without the list and watch
// requests of every watch hitting a server that is down.
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { errorText } from '../runtime/log.js';

/**
 * GET <server>/readyz with the kubeconfig's credentials; resolves when it
 * answers 200, rejects with why not. /readyz (not /version) because an API
 * server that is starting answers but is not ready to serve watches yet.
 */
export async function probeReadyz(kc: KubeConfig, timeoutMs: number): Promise<void> {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('kubeconfig names no current cluster');
  const url = new URL('/readyz', server);
  const options: https.RequestOptions = { method: 'GET' };
  // Sets CA, client certificate or token header, and client-node's per-cluster agent.
  await kc.applyToHTTPSOptions(options);
  const request = url.protocol === 'http:' ? http.request : https.request;
  await new Promise<void>((resolve, reject) => {
    const req = request(url, { ...options, signal: AbortSignal.timeout(timeoutMs) }, (res) => {
      res.resume();
      if (res.statusCode === 200) resolve();
      else reject(new Error(`GET ${url.href}: HTTP ${res.statusCode}`));
    });
    req.on('error', (err) => reject(new Error(`GET ${url.href}: ${errorText(err)}`)));
    req.end();
  });
}

export interface ReadinessProbeOptions {
  probe: () => Promise<void>;
  /** The API server answers again after not answering (or on the first answer after start()). */
  onReady: () => void;
  /** Between the end of one probe and the start of the next; jittered by ±20 %. */
  intervalMs?: number;
}

/**
 * Probes at a bounded interval while started: one probe in flight at most,
 * so a server that hangs is asked no faster than the probe's own timeout.
 */
export class ReadinessProbe {
  private timer?: NodeJS.Timeout;
  private running = false;
  /** Counts start()s: a probe still in flight from an earlier run must not schedule a second loop. */
  private run = 0;
  private inFlight = false;
  /** The last probe's result; undefined right after start(), so that a first success counts. */
  private lastOk?: boolean;

  constructor(private readonly opts: ReadinessProbeOptions) {}

  get active(): boolean {
    return this.running;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.run++;
    this.lastOk = undefined;
    this.schedule();
  }

  stop(): void {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    const interval = this.opts.intervalMs ?? 1_000;
    const run = this.run;
    this.timer = setTimeout(() => void this.tick(run), interval * (0.8 + Math.random() * 0.4));
    this.timer.unref();
  }

  private async tick(run: number): Promise<void> {
    this.timer = undefined;
    // A probe of an earlier run (stop, then start) still waiting for its answer: one at a time.
    if (this.inFlight) return this.schedule();
    this.inFlight = true;
    let ok: boolean;
    try {
      await this.opts.probe();
      ok = true;
    } catch {
      // A failed probe is the expected state of a cluster that is down; the watches report why.
      ok = false;
    } finally {
      this.inFlight = false;
    }
    if (!this.running || run !== this.run) return;
    // Only the edge: a server that answers /readyz while a watch keeps failing for
    // another reason (say RBAC) must not restart that watch every interval.
    if (ok && this.lastOk !== true) this.opts.onReady();
    this.lastOk = ok;
    this.schedule();
  }
}
