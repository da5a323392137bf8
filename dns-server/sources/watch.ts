// What the sources that watch the Kubernetes API (the DNSRecordSets, the
// clusterset zone) share: their options, and how their informers are kept
// alive (runtime/restarting-informer.ts).
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from '../../runtime/log.js';
import type { RestartingInformerOptions } from '../../runtime/restarting-informer.js';
import type { SourcedRecordSet } from '../zone/compile.js';

export interface WatchSourceOptions {
  kubeConfig: KubeConfig;
  /** Replace the informers with freshly listed ones about this often (±20 %). */
  resyncMs: number;
  backoffMinMs: number;
  backoffMaxMs: number;
  onRecords: (source: string, sets: SourcedRecordSet[]) => void;
  onError: (source: string) => void;
  log: Logger;
}

/**
 * A fresh informer per attempt: each failure starts a new one after a backoff, and a new one also
 * replaces the running one now and then (with jitter) in case a watch went quiet without an error.
 */
export function freshInformerPolicy(
  opts: WatchSourceOptions,
): Pick<RestartingInformerOptions<KubernetesObject>, 'restart' | 'backoff' | 'relistMs' | 'relistJitter'> {
  return {
    restart: 'fresh',
    // Not jittered: one watch per kind and process, each retry logged with its wait.
    backoff: { minMs: opts.backoffMinMs, maxMs: opts.backoffMaxMs, jitter: 0 },
    relistMs: opts.resyncMs,
    relistJitter: 0.2,
  };
}
