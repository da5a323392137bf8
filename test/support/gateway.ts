// A stand-in for a cluster's gateway (the demo's kuard behind Envoy): a real
// HTTP server in a process of its own on a LoadBalancer address, answering
// /healthz with the status it was started with. Tests fail it in the data
// path: the process stopped, or started again answering 503.
import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';
import { stopChild } from './stop-child.js';

const SERVER = `
const http = require('node:http');
const [address, port, status, name] = process.argv.slice(1);
http
  .createServer((req, res) => {
    res.writeHead(req.url === '/healthz' ? Number(status) : 200, { 'content-type': 'text/plain' });
    res.end(name + '\\n');
  })
  .listen(Number(port), address, () => process.stderr.write('listening\\n'));
`;

export interface GatewayProcess {
  address: string;
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => running.forEach((c) => c.kill('SIGKILL')));

/** Starts the gateway on address:port; resolves once it listens. */
export async function startGateway(
  address: string,
  port: number,
  opts: { healthStatus?: number; name?: string } = {},
): Promise<GatewayProcess> {
  const child = spawn(
    process.execPath,
    ['-e', SERVER, address, String(port), String(opts.healthStatus ?? 200), opts.name ?? address],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  running.add(child);
  child.once('exit', () => running.delete(child));
  await new Promise<void>((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stderr! });
    lines.on('line', (line) => line === 'listening' && resolve());
    child.once('exit', (code) => reject(new Error(`gateway ${address}:${port} exited (${code})`)));
  });
  return { address, port, child, stop: () => stopChild(child, 2000, 'SIGKILL') };
}
