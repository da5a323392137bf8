// Health, readiness and Prometheus metrics over HTTP (--health-listen).
import http from 'node:http';
import type { Metrics } from './metrics.js';

export function startHttp(
  host: string,
  port: number,
  ready: () => boolean,
  metrics: Metrics,
): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const send = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    if (path === '/healthz') return send(200, 'ok\n');
    // Ready once every source delivered once and the zones are built from it.
    if (path === '/readyz') return ready() ? send(200, 'ok\n') : send(503, 'waiting for the first sync\n');
    if (path === '/metrics') return send(200, metrics.render(), 'text/plain; version=0.0.4; charset=utf-8');
    send(404, 'not found\n');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      resolve({ server, port: typeof address === 'object' && address ? address.port : port });
    });
  });
}
