// A watched cache of one resource: @kubernetes/client-node's makeInformer
// (ListWatch), which re-lists on 410 Gone and re-opens after its own 30 s
// inactivity timeout but, in 2.x as in 1.x, stops for good on any other
// error (connection refused, 429, 5xx), wrapped so that it restarts with backoff, re-lists now and then with
// jitter (no watch dies silently), and reports whether its API server is
// reachable. Its cache survives errors: an unreachable cluster keeps its last
// known objects.
import {
  ListWatch,
  Watch,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { WatchReconnectPolicy } from '../../process/watch-reconnect.js';
import { errorText, httpStatus } from './log.js';

export type ChangeType = 'add' | 'update' | 'delete';

/** Accept headers of a metadata-only watch and list (Kubernetes API concepts, "Receiving resources as metadata"). */
export const PARTIAL_OBJECT_METADATA = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
export const PARTIAL_OBJECT_METADATA_LIST =
  'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';

type RequestContext = Parameters<KubeConfig['applySecurityAuthentication']>[0];

/**
 * The KubeConfig as client-node's Watch uses it (the current cluster, and the authentication of
 * each request), with one Accept header set on every watch request: Watch takes no headers of its own.
 */
function accepting(kc: KubeConfig, accept: string): KubeConfig {
  const view: Pick<KubeConfig, 'getCurrentCluster' | 'applySecurityAuthentication'> = {
    getCurrentCluster: () => kc.getCurrentCluster(),
    applySecurityAuthentication: async (ctx: RequestContext) => {
      await kc.applySecurityAuthentication(ctx);
      ctx.setHeaderParam('Accept', accept);
    },
  };
  // Watch (client-node 2.x watch.js) calls only these two; the cast says so instead of copying a KubeConfig.
  return view as KubeConfig;
}

export interface WatchOptions<T extends KubernetesObject> {
  kc: KubeConfig;
  /** The watch path, e.g. /api/v1/services or /apis/g/v/namespaces/ns/kind. */
  path: string;
  list: () => Promise<KubernetesListObject<T>>;
  labelSelector?: string;
  /** e.g. metadata.name=coredns: one object instead of a whole namespace's worth of events. */
  fieldSelector?: string;
  /**
   * Ask the API server for metadata only (PartialObjectMetadata, as controller-runtime's
   * metadata-only watches do): the watch's events carry no data or spec. The list function must
   * ask the same (PARTIAL_OBJECT_METADATA_LIST as its Accept header).
   */
  metadataOnly?: boolean;
  /** Full re-list period; each one is jittered by ±10 %. */
  relistMs?: number;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

export class WatchedResource<T extends KubernetesObject> {
  private readonly informer;
  private readonly changeListeners: ((type: ChangeType, obj: T) => void)[] = [];
  private readonly healthListeners: ((healthy: boolean, error?: string) => void)[] = [];
  private syncWaiters: (() => void)[] = [];
  private stopped = true;
  /** True while we stop the underlying informer on purpose: its abort error is not a failure. */
  private restarting = false;
  private failures = 0;
  private attemptFailed = false;
  private retryTimer?: NodeJS.Timeout;
  private relistTimer?: NodeJS.Timeout;
  /** The first list succeeded (the cache holds the API server's objects). */
  synced = false;
  /** The first start attempt has finished, well or not. */
  tried = false;
  healthy = false;
  lastError?: string;
  /** The HTTP status of the last failure, when the API server answered at all. */
  lastErrorStatus?: number;

  constructor(private readonly opts: WatchOptions<T>) {
    // What makeInformer builds, plus the field selector and the reconnect policy it does not pass on.
    const reconnect = new WatchReconnectPolicy();
    this.informer = new ListWatch<T>(
      opts.path,
      new Watch(opts.metadataOnly ? accepting(opts.kc, PARTIAL_OBJECT_METADATA) : opts.kc),
      opts.list,
      false,
      opts.labelSelector,
      opts.fieldSelector,
      { delayFn: reconnect.delayFn },
    );
    this.informer.on('connect', reconnect.connected);
    for (const type of ['add', 'update', 'delete'] as const)
      this.informer.on(type, (obj: T) => {
        if (!this.stopped) this.changeListeners.forEach((l) => l(type, obj));
      });
    this.informer.on('error', (err?: unknown) => this.failed(err));
  }

  onChange(listener: (type: ChangeType, obj: T) => void): void {
    this.changeListeners.push(listener);
  }

  onHealth(listener: (healthy: boolean, error?: string) => void): void {
    this.healthListeners.push(listener);
  }

  list(namespace?: string): readonly T[] {
    return this.informer.list(namespace);
  }

  get(name: string, namespace?: string): T | undefined {
    return this.informer.get(name, namespace);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.retry();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    clearTimeout(this.relistTimer);
    this.restarting = true;
    await this.informer.stop();
    this.syncWaiters.splice(0).forEach((w) => w());
  }

  /** Resolves once the cache is filled, or the first attempt failed, or the time is up. */
  async waitForFirstAttempt(timeoutMs: number): Promise<void> {
    if (this.tried) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.syncWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Someone who knows the API server answers again (the cluster's readiness
   * probe) says so: a watch waiting out its backoff forgets it and starts now,
   * instead of leaving a cluster that is back unwatched for up to maxBackoffMs.
   * An attempt already under way, or a healthy watch, is left alone.
   */
  retryNow(): void {
    if (this.stopped || this.healthy || this.retryTimer === undefined) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.failures = 0;
    this.retry();
  }

  /** informer.start() can reject before its watch is set up (a kubeconfig without a cluster): that is a failure like any other. */
  private retry(): void {
    this.attempt().catch((err: unknown) => this.failed(err));
  }

  private async attempt(): Promise<void> {
    if (this.stopped) return;
    this.attemptFailed = false;
    this.restarting = false;
    await this.informer.start();
    if (this.stopped || this.attemptFailed) return;
    this.failures = 0;
    this.synced = true;
    this.markTried();
    this.setHealth(true);
    this.scheduleRelist();
  }

  private failed(err: unknown): void {
    if (this.stopped || this.restarting) return;
    this.attemptFailed = true;
    this.markTried();
    this.lastErrorStatus = httpStatus(err);
    this.setHealth(false, errorText(err));
    clearTimeout(this.relistTimer);
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.failures++;
    const min = this.opts.minBackoffMs ?? 250;
    const max = this.opts.maxBackoffMs ?? 5_000;
    const delay = Math.min(max, min * 2 ** Math.min(this.failures - 1, 20)) * (0.8 + Math.random() * 0.4);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.retry();
    }, delay);
    this.retryTimer.unref();
  }

  private scheduleRelist(): void {
    clearTimeout(this.relistTimer);
    const period = this.opts.relistMs ?? 5 * 60_000;
    this.relistTimer = setTimeout(() => void this.relist(), period * (0.9 + Math.random() * 0.2));
    this.relistTimer.unref();
  }

  /** Stop and start with an empty resourceVersion: a full list, whose differences reach the listeners. */
  private async relist(): Promise<void> {
    if (this.stopped) return;
    this.restarting = true;
    await this.informer.stop();
    // The aborted watch reports its abort asynchronously; let that pass before starting again.
    await new Promise((r) => setTimeout(r, 100));
    // ListWatch keeps resourceVersion private; clearing it is the only way to ask it for a full list.
    (this.informer as unknown as { resourceVersion: string }).resourceVersion = '';
    this.retry();
  }

  private markTried(): void {
    if (this.tried) return;
    this.tried = true;
    this.syncWaiters.splice(0).forEach((w) => w());
  }

  private setHealth(healthy: boolean, error?: string): void {
    const changed = healthy !== this.healthy;
    this.healthy = healthy;
    this.lastError = healthy ? undefined : error;
    if (healthy) this.lastErrorStatus = undefined;
    if (changed) this.healthListeners.forEach((l) => l(healthy, error));
  }
}
