// What a failed pod walkthrough leaves for the user to read: the test
// environment's logs (etcd, API servers, controller-manager, scheduler), each
// node's logs (containerd, kubelet, kube-proxy) and its pods' container logs,
// and what each cluster's API server says about its objects and events.
import { cpSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TestEnv } from '../test/support/testenv.js';
import type { Kubectl } from './kubectl.js';

const OBJECTS = ['nodes,pods,deployments,services,endpointslices', '-A', '-o', 'wide'];

export async function collectPodLogs(
  env: TestEnv,
  logDir: string,
  kubectl: (cluster: string) => Kubectl,
): Promise<void> {
  for (const file of readdirSync(env.info.dir).filter((f) => f.endsWith('.log')))
    cpSync(path.join(env.info.dir, file), path.join(logDir, file));
  for (const { name, node } of env.info.clusters) {
    const into = path.join(logDir, name);
    mkdirSync(into, { recursive: true });
    if (node) {
      // pod-logs holds each container's log, beside the node's own logs folder.
      for (const from of [node.logs, path.join(path.dirname(node.logs), 'pod-logs')])
        if (existsSync(from))
          cpSync(from, path.join(into, path.basename(from)), { recursive: true, dereference: true });
    }
    // Written even when the API server does not answer: the error says so in the file.
    const report: string[] = [];
    for (const args of [
      ['get', ...OBJECTS],
      ['get', 'events', '-A', '--sort-by=.lastTimestamp'],
    ]) {
      const text = await kubectl(name)
        .run(args)
        .catch((err: unknown) => `(failed: ${(err as Error).message})\n`);
      report.push(`$ kubectl ${args.join(' ')}\n${text}`);
    }
    writeFileSync(path.join(logDir, `${name}-objects.txt`), report.join('\n'));
  }
}
