// The walkthrough's kuard, behind cluster-a's LoadBalancer address: a small
// HTTP server on a loopback address, standing where the cloud load balancer
// would deliver traffic.
import http from 'node:http';

export interface Kuard {
  url: string;
  close(): Promise<void>;
}

export async function startKuard(address: string, cluster: string, port = 80): Promise<Kuard> {
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`kuard: hello from ${cluster} (${req.headers.host ?? address}${req.url ?? '/'})\n`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) =>
      reject(new Error(`kuard: cannot listen on ${address}:${port}: ${err.message}`)),
    );
    server.listen(port, address, () => resolve());
  });
  return {
    url: `http://${address}:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
