// Kubernetes Events (core/v1) on the objects the operator acts for, so that
// `kubectl describe gatewaydns` tells what happened. The same event is not
// repeated within a quiet period, so a failing cluster retried with backoff
// does not flood the namespace.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { CONTROLLER_NAME } from '../../../api/index.js';
import type { Logger } from './log.js';

export interface EventTarget {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; uid?: string };
}

const QUIET_MS = 5 * 60_000;

export class EventRecorder {
  private readonly core: CoreV1Api;
  private readonly recent = new Map<string, number>();

  constructor(
    kc: KubeConfig,
    private readonly log: Logger,
    private readonly instance: string,
  ) {
    this.core = kc.makeApiClient(CoreV1Api);
  }

  normal(target: EventTarget, reason: string, message: string): void {
    this.emit(target, 'Normal', reason, message);
  }

  warning(target: EventTarget, reason: string, message: string): void {
    this.emit(target, 'Warning', reason, message);
  }

  private emit(target: EventTarget, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const namespace = target.metadata.namespace ?? 'default';
    const dedupKey = `${target.metadata.uid}|${type}|${reason}|${message}`;
    const now = Date.now();
    if ((this.recent.get(dedupKey) ?? 0) > now - QUIET_MS) return;
    this.recent.set(dedupKey, now);
    if (this.recent.size > 10_000) this.recent.clear();
    const time = new Date(now);
    this.core
      .createNamespacedEvent({
        namespace,
        body: {
          metadata: { generateName: `${target.metadata.name}.`, namespace },
          involvedObject: {
            apiVersion: target.apiVersion,
            kind: target.kind,
            name: target.metadata.name,
            namespace,
            uid: target.metadata.uid,
          },
          type,
          reason,
          message: message.slice(0, 1000),
          firstTimestamp: time,
          lastTimestamp: time,
          count: 1,
          source: { component: CONTROLLER_NAME },
          reportingComponent: CONTROLLER_NAME,
          reportingInstance: this.instance,
        },
      })
      .catch((err: unknown) =>
        this.log.warn('could not record event', {
          object: `${target.kind} ${namespace}/${target.metadata.name}`,
          reason,
          error: err,
        }),
      );
  }
}
