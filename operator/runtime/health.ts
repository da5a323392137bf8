// /healthz (the process runs), /readyz (its caches are synced, or it is a
// standby replica that can reach the API server) and /metrics (Prometheus text).
import http from 'node:http';

export interface HealthOptions {
  listen: string;
  ready: () => boolean;
  metrics: () => string;
}

export async function startHealthServer(opts: HealthOptions): Promise<http.Server> {
  const { host, port } = parseListen(opts.listen);
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (code: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(code, { 'content-type': type });
      res.end(body);
    };
    if (path === '/healthz') return send(200, 'ok\n');
    if (path === '/readyz') return opts.ready() ? send(200, 'ok\n') : send(503, 'not ready\n');
    if (path === '/metrics') return send(200, opts.metrics(), 'text/plain; version=0.0.4; charset=utf-8');
    send(404, 'not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

/** "host:port", ":port" or "[v6]:port". */
export function parseListen(listen: string): { host: string | undefined; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(listen);
  if (!m) throw new Error(`--health-listen: want host:port, got "${listen}"`);
  return { host: m[1] ?? (m[2] || undefined), port: Number(m[3]) };
}
