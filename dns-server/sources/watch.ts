// What the sources that watch the Kubernetes API (the DNSRecordSets, the
// clusterset zone, the zone declaration) share: their options, how their
// informers are kept alive (runtime/restarting-informer.ts), and how a failed
// watch is told.
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
  opts: Pick<WatchSourceOptions, 'resyncMs' | 'backoffMinMs' | 'backoffMaxMs'>,
): Pick<RestartingInformerOptions<KubernetesObject>, 'restart' | 'backoff' | 'relistMs' | 'relistJitter'> {
  return {
    restart: 'fresh',
    // Not jittered: one watch per kind and process, each retry logged with its wait.
    backoff: { minMs: opts.backoffMinMs, maxMs: opts.backoffMaxMs, jitter: 0 },
    relistMs: opts.resyncMs,
    relistJitter: 0.2,
  };
}

/**
 * An informer's onFailure: the failure counted and logged (`message` says what is served
 * meanwhile) with the wait before the retry.
 */
export function reportWatchFailure(
  opts: Pick<WatchSourceOptions, 'onError' | 'log'>,
  source: string,
  message: string,
): (err: unknown, retryInMs: number) => void {
  return (err, retryInMs) => {
    opts.onError(source);
    opts.log.warn(message, { source, error: watchErrorText(err), retryInMs });
  };
}

/** A failed watch's error in one line: the informer may reject with a plain object. */
export function watchErrorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'object' && err !== null) return JSON.stringify(err);
  return String(err);
}
