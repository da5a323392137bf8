// /healthz (the process runs), /readyz (the component says it is ready) and
// /metrics (the registry in Prometheus text) on one small HTTP server.
import http from 'node:http';
import type { Registry } from 'prom-client';
import type { Runnable } from './manager.js';

export interface HealthOptions {
  host: string | undefined;
  port: number;
  ready: () => boolean;
  /** Said by /readyz while not ready. */
  notReadyText?: string;
  registry: Registry;
}

export interface HealthServer {
  server: http.Server;
  /** The bound port (the one asked for, or the one chosen for port 0). */
  port: number;
  close(): Promise<void>;
}

export async function startHealthServer(opts: HealthOptions): Promise<HealthServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (code: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(code, { 'content-type': type });
      res.end(body);
    };
    if (path === '/healthz') return send(200, 'ok\n');
    if (path === '/readyz')
      return opts.ready() ? send(200, 'ok\n') : send(503, opts.notReadyText ?? 'not ready\n');
    if (path === '/metrics') {
      opts.registry.metrics().then(
        (text) => send(200, text, opts.registry.contentType),
        (err: unknown) => send(500, `metrics failed: ${err instanceof Error ? err.message : String(err)}\n`),
      );
      return;
    }
    send(404, 'not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // '' (":PORT"): every address; Node then listens on :: dual-stack, or 0.0.0.0 without IPv6.
    server.listen(opts.port, opts.host || undefined, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  return {
    server,
    port: typeof address === 'object' && address ? address.port : opts.port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The health server as a runnable of a process's manager (runtime/manager.ts), last to start and first to stop. */
export class HealthEndpoint implements Runnable {
  readonly name = 'health';
  private server: HealthServer | undefined;

  constructor(private readonly opts: HealthOptions) {}

  /** The bound port once started. */
  get port(): number | undefined {
    return this.server?.port;
  }

  async start(): Promise<void> {
    this.server = await startHealthServer(this.opts);
  }

  async stop(): Promise<void> {
    await this.server?.close();
  }
}

/** "host:port", ":port" or "[v6]:port". */
export function parseListen(
  listen: string,
  flag = '--health-listen',
): { host: string | undefined; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(listen);
  if (!m) throw new Error(`${flag}: want host:port, got "${listen}"`);
  return { host: m[1] ?? (m[2] || undefined), port: Number(m[3]) };
}
