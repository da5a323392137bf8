import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: the nearest folder above this file with a package.json (works from src and dist). */
export function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'crds'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no repository root above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

/** Binaries built by test/testenv/build.sh. */
export function binPath(
  name:
    'testenv' | 'kubectl' | 'coredns' | 'helm' | 'clusterprofile-consumer' | 'kubeconfig-secretreader-plugin',
): string {
  const p = path.join(repoRoot(), '.cache', 'bin', name);
  if (!existsSync(p)) throw new Error(`${p} is missing: run "npm run testenv:build" first`);
  return p;
}

/** The Gateway API CRDs of one release channel, copied from its module by test/testenv/build.sh. */
export function gatewayApiCrds(channel: 'standard' | 'experimental'): string {
  const p = path.join(repoRoot(), '.cache', 'gateway-api', channel);
  if (!existsSync(p)) throw new Error(`${p} is missing: run "npm run testenv:build" first`);
  return p;
}

/** Cluster API's CRDs and webhook configurations, copied from its module by test/testenv/build.sh. */
export function clusterApiManifests(): string {
  const p = path.join(repoRoot(), '.cache', 'cluster-api');
  if (!existsSync(path.join(p, 'webhook.yaml')))
    throw new Error(`${p} is missing: run "npm run testenv:build" first`);
  return p;
}
