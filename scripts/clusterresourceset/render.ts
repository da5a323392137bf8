// A kustomization (config/workload or an overlay of it) rendered by kubectl's
// kustomize and turned into the ClusterResourceSet stream of generate.ts.
import { execFileSync } from 'node:child_process';
import { clusterResourceSet, parseManifests } from './generate.js';

export function renderClusterResourceSet(kustomization: string, kubectl = 'kubectl'): string {
  const rendered = execFileSync(kubectl, ['kustomize', kustomization], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  return clusterResourceSet(parseManifests(rendered));
}
