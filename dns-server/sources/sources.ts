// The sources the flags ask for, in the order they start: the records file,
// the DNSRecordSets of a namespace, the clusterset zone. The Kubernetes ones
// are loaded only in Kubernetes mode: the client library alone costs tens of
// megabytes resident.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../../runtime/log.js';
import type { Runnable } from '../../runtime/manager.js';
import type { SourcedRecordSet } from '../zone/compile.js';
import { FileSource } from './file.js';

export interface SourcesConfig {
  recordsFile: string | undefined;
  filePollMs: number;
  kubernetes: { namespace: string; resyncMs: number; clustersetDomain: string | undefined } | undefined;
}

/** Where the sources deliver. */
export interface Deliveries {
  /** A source's record sets, all of them at each change. */
  onRecords: (source: string, sets: SourcedRecordSet[]) => void;
  /** The records file's text, parsed by the build. */
  onText: (source: string, yaml: string) => void;
  onError: (source: string) => void;
  log: Logger;
}

/** A source: a runnable the store expects one delivery from, by its name, before it is ready. */
export type Source = Runnable;

/** The Kubernetes sources retry a failed watch after 200 ms, doubling to 5 s. */
const WATCH_BACKOFF = { backoffMinMs: 200, backoffMaxMs: 5000 };

export async function sourcesFor(
  config: SourcesConfig,
  kubeConfig: KubeConfig | undefined,
  deliveries: Deliveries,
): Promise<Source[]> {
  const { onRecords, onText, onError, log } = deliveries;
  const sources: Source[] = [];
  if (config.recordsFile)
    sources.push(
      new FileSource({ path: config.recordsFile, pollMs: config.filePollMs, onText, onError, log }),
    );
  if (!config.kubernetes || !kubeConfig) return sources;
  const watch = {
    kubeConfig,
    resyncMs: config.kubernetes.resyncMs,
    ...WATCH_BACKOFF,
    onRecords,
    onError,
    log,
  };
  const { KubernetesSource } = await import('./kubernetes.js');
  sources.push(new KubernetesSource({ ...watch, namespace: config.kubernetes.namespace }));
  const zone = config.kubernetes.clustersetDomain;
  if (zone) {
    const { ClustersetSource } = await import('./clusterset.js');
    sources.push(new ClustersetSource({ ...watch, zone }));
  }
  return sources;
}

/** The cluster's API: from a kubeconfig file, or in-cluster; one connection pool for every client. */
export async function kubeConfigOf(kubeconfig: string | undefined): Promise<KubeConfig> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const { reuseConnections } = await import('../../runtime/kube-connections.js');
  const kc = new KubeConfig();
  if (kubeconfig) kc.loadFromFile(kubeconfig);
  else kc.loadFromCluster();
  reuseConnections(kc);
  return kc;
}
