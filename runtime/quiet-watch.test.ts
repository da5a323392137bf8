import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { QuietWatch, WATCH_INACTIVITY_MS } from './quiet-watch.js';

function kubeConfigFor(server: http.Server): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    // Plain HTTP: client-node allows it only with skipTLSVerify.
    clusters: [
      {
        name: 'c',
        server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        skipTLSVerify: true,
      },
    ],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

describe('QuietWatch', () => {
  it('asks for bookmarks and a server-side end after 5 to 10 minutes, and waits past a bookmark', async () => {
    const urls: string[] = [];
    const server = http.createServer((req, res) => {
      urls.push(req.url ?? '');
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(); // the server ends the watch at once: done() is called without an error
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const kc = kubeConfigFor(server);
      for (const random of [0, 0.999]) {
        const watch = new QuietWatch(kc, () => random);
        expect((watch as unknown as { requestTimeoutMs: number }).requestTimeoutMs).toBe(WATCH_INACTIVITY_MS);
        const ended = new Promise<unknown>((resolve, reject) => {
          watch
            .watch('/api/v1/namespaces', { resourceVersion: '42' }, () => undefined, resolve)
            .catch(reject);
        });
        expect(await ended).toBeNull();
      }
      const params = urls.map((u) => new URL(u, 'http://x').searchParams);
      expect(params.map((p) => p.get('timeoutSeconds'))).toEqual(['300', '599']);
      for (const p of params) {
        expect(p.get('watch')).toBe('true');
        expect(p.get('allowWatchBookmarks')).toBe('true');
        expect(p.get('resourceVersion')).toBe('42');
      }
      expect(WATCH_INACTIVITY_MS).toBeGreaterThan(60_000);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('transforms each object before the informer sees it, and passes bookmarks on as they came', async () => {
    const object = { metadata: { name: 'a', resourceVersion: '7', managedFields: [{ manager: 'm' }] } };
    const bookmark = { metadata: { resourceVersion: '8' } };
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(JSON.stringify({ type: 'ADDED', object }) + '\n');
      res.end(JSON.stringify({ type: 'BOOKMARK', object: bookmark }) + '\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const seen: [string, unknown][] = [];
      const watch = new QuietWatch(kubeConfigFor(server), Math.random, (o) => ({ ...o, transformed: true }));
      await new Promise<unknown>((resolve, reject) => {
        watch.watch('/api/v1/namespaces', {}, (phase, o) => seen.push([phase, o]), resolve).catch(reject);
      });
      expect(seen).toEqual([
        ['ADDED', { ...object, transformed: true }],
        ['BOOKMARK', bookmark],
      ]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
