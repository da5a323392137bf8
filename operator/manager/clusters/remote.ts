// One workload cluster as the operator sees it: a client built from its
// kubeconfig, and the informers of what controllers read there, handed out by
// resource type (informer(type, namespace)) and started on first use, as
// controller-runtime's cluster cache does. It is the one owner of the
// cluster's reachability: unreachable as soon as any of its watches finds the
// API server not answering, reachable when none does; readers ask it, not one
// particular watch. While it is unreachable a readiness probe asks the API
// server once a second, and restarts the watches the moment it answers.
import {
  CoreV1Api,
  DiscoveryV1Api,
  KubernetesObjectApi,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { WatchedResource, type ChangeType } from '../runtime/informer.js';
import { WriteGate } from '../runtime/write-gate.js';
import { ReadinessProbe, probeReadyz } from './probe.js';
import { informerKey, resourceApis, type ResourceApis, type ResourceType } from './resource.js';

export interface RemoteChange {
  /** The resource type's kind (ResourceType.kind). */
  kind: string;
  type: ChangeType;
  object: KubernetesObject;
}

export interface RemoteClusterOptions {
  /** "namespace/name" of the Cluster in the management cluster. */
  key: string;
  kc: KubeConfig;
  relistMs?: number;
  onChange: (change: RemoteChange) => void;
  /**
   * A watch of the cluster failed or recovered. Called for every such change,
   * not only when the cluster as a whole flips (changed): a reader that ran
   * between the first and the last watch to notice must be asked again.
   */
  onHealth: (health: ClusterHealth) => void;
  /** How often the readiness probe asks an unreachable cluster's API server (default 1 s, jittered). */
  probeIntervalMs?: number;
  /** The probe's own timeout (default 1 s). */
  probeTimeoutMs?: number;
  /** Where the operator's writes to every cluster queue (default: one of this cluster's own, unlimited). */
  writeGate?: WriteGate;
  /**
   * Why this replica may not write to the cluster now (its namespace's shard is not held), or
   * undefined: asked as each write starts, not when it is queued, so a write queued before a shard
   * was lost never reaches the cluster (ADR 0207's fence).
   */
  fence?: () => string | undefined;
}

/** A gate that lets every request through at once: a RemoteCluster made without one (tests). */
const UNLIMITED: WriteGate = new WriteGate({
  maxInFlight: Infinity,
  maxInFlightPerCluster: Infinity,
  qps: 0,
  burst: 0,
});

export interface ClusterHealth {
  healthy: boolean;
  /** The cluster as a whole flipped between reachable and unreachable with this change. */
  changed: boolean;
  error?: string;
  /** The watch whose health changed. */
  watch: { path: string; healthy: boolean; error?: string; status?: number };
}

/**
 * Whether a watch's failure means the API server does not serve at all: no
 * answer (refused, reset, timed out) or an answer that it cannot serve now
 * (429 while its storage initialises, 5xx). A 403 or 404 is about one
 * resource (RBAC, a CRD not installed): the cluster is reachable, and only
 * the readers of that watch see its error.
 */
export function notAnswering(status: number | undefined): boolean {
  return status === undefined || status === 429 || status >= 500;
}

function failsToReach(w: WatchedResource<KubernetesObject>): boolean {
  return w.tried && !w.healthy && notAnswering(w.lastErrorStatus);
}

interface InformerEntry {
  informer: WatchedResource<KubernetesObject>;
  kind: string;
  namespace?: string;
  /** Some reader keeps it for the client's life: a release by the readers that come and go leaves it. */
  pinned: boolean;
}

export class RemoteCluster {
  readonly kc: KubeConfig;
  readonly objects: KubernetesObjectApi;
  readonly core: CoreV1Api;
  readonly discovery: DiscoveryV1Api;
  private readonly apis: ResourceApis;
  private readonly informers = new Map<string, InformerEntry>();
  private wasHealthy: boolean | undefined;
  private readonly probe: ReadinessProbe;
  private stopped = false;

  constructor(private readonly opts: RemoteClusterOptions) {
    this.kc = opts.kc;
    this.objects = KubernetesObjectApi.makeApiClient(opts.kc);
    this.apis = resourceApis(opts.kc);
    this.core = this.apis.core;
    this.discovery = this.apis.discovery;
    this.probe = new ReadinessProbe({
      probe: () => probeReadyz(opts.kc, opts.probeTimeoutMs ?? 1_000),
      onReady: () => this.all().forEach((w) => w.retryNow()),
      intervalMs: opts.probeIntervalMs,
    });
  }

  /**
   * A write (apply, delete) to this cluster, started when the operator's write gate allows and
   * given `timeoutMs` from then: every write to a workload cluster goes through here.
   */
  write<T>(what: string, timeoutMs: number, request: () => Promise<T>): Promise<T> {
    const fence = this.opts.fence;
    const fenced = fence
      ? () => {
          const refused = fence();
          return refused
            ? Promise.reject(new Error(`${what} in cluster ${this.opts.key} not sent: ${refused}`))
            : request();
        }
      : request;
    return (this.opts.writeGate ?? UNLIMITED).run(this.opts.key, what, timeoutMs, fenced);
  }

  get key(): string {
    return this.opts.key;
  }

  /**
   * The informer of a resource type, cluster-wide or of one namespace, started on first use. One
   * a reader asks for only while some output needs it (`releasable`: the Services and
   * EndpointSlices of a namespace some object names) stops at release(); any other is kept while
   * the client lives.
   */
  informer<T extends KubernetesObject>(
    type: ResourceType<T>,
    namespace?: string,
    opts: { releasable?: boolean } = {},
  ): WatchedResource<T> {
    const key = informerKey(type as ResourceType<KubernetesObject>, namespace);
    let entry = this.informers.get(key);
    if (!entry) {
      const informer = this.watch<T>(type, namespace) as unknown as WatchedResource<KubernetesObject>;
      entry = { informer, kind: type.kind, namespace, pinned: false };
      this.informers.set(key, entry);
    }
    if (!opts.releasable) entry.pinned = true;
    return entry.informer as unknown as WatchedResource<T>;
  }

  /** Whether the informer of this type (cluster-wide, or of the namespace) was started. */
  watching(type: ResourceType<KubernetesObject>, namespace?: string): boolean {
    return this.informers.has(informerKey(type, namespace));
  }

  /**
   * Stops the informers of one kind in one namespace that no reader needs any more; the next use
   * starts them again. One a reader keeps (not asked for as releasable) stays.
   */
  release(kind: string, namespace: string): 'released' | 'kept' {
    let kept = false;
    for (const [key, entry] of this.informers) {
      if (entry.kind !== kind || entry.namespace !== namespace) continue;
      if (entry.pinned) {
        kept = true;
        continue;
      }
      this.informers.delete(key);
      void entry.informer.stop();
    }
    return kept ? 'kept' : 'released';
  }

  /**
   * Waits (each up to timeoutMs) for these informers' first lists, then says why what their caches
   * hold cannot be trusted now, if so: the one wait-then-check every reader of a workload cluster makes.
   */
  async synced(
    informers: readonly Pick<
      WatchedResource<KubernetesObject>,
      'waitForFirstAttempt' | 'healthy' | 'lastError'
    >[],
    timeoutMs: number,
  ): Promise<string | undefined> {
    await Promise.all(informers.map((w) => w.waitForFirstAttempt(timeoutMs)));
    for (const w of informers) {
      const why = this.unreachableReason(w);
      if (why) return why;
    }
    return undefined;
  }

  /** Reachable unless a watch found the API server not answering; undefined before any has tried. */
  get healthy(): boolean | undefined {
    const all = this.all();
    if (!all.some((w) => w.tried)) return undefined;
    return !all.some(failsToReach);
  }

  /** Why the cluster is unreachable: the error of the first watch that found it so. */
  get lastError(): string | undefined {
    return this.all().find(failsToReach)?.lastError;
  }

  /**
   * Why what this watch's cache says cannot be trusted now, if so: the
   * cluster is unreachable (whichever watch found that out), or this watch
   * itself fails or has not connected yet.
   */
  unreachableReason(
    watch: Pick<WatchedResource<KubernetesObject>, 'healthy' | 'lastError'>,
  ): string | undefined {
    if (this.healthy === false) return this.lastError ?? 'API server not answering';
    if (!watch.healthy) return watch.lastError ?? 'API server not answering yet';
    return undefined;
  }

  /**
   * Whether the API server answers but does not serve this watch's resource (404: a CRD not
   * installed), so that its readers can read it as none rather than as a failure.
   */
  notServed(watch: Pick<WatchedResource<KubernetesObject>, 'healthy' | 'lastErrorStatus'>): boolean {
    return !watch.healthy && watch.lastErrorStatus === 404 && this.healthy !== false;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.probe.stop();
    await Promise.all(this.all().map((w) => w.stop()));
  }

  private all(): WatchedResource<KubernetesObject>[] {
    return [...this.informers.values()].map((e) => e.informer);
  }

  private watch<T extends KubernetesObject>(type: ResourceType<T>, namespace?: string): WatchedResource<T> {
    const path = type.path(namespace);
    const kind = type.kind;
    const w = new WatchedResource<T>({
      kc: this.kc,
      path,
      list: () => type.list(this.apis, namespace),
      labelSelector: type.labelSelector,
      fieldSelector: type.fieldSelector,
      relistMs: this.opts.relistMs,
    });
    w.onChange((type, object) => this.opts.onChange({ kind, type, object }));
    w.onHealth((watchHealthy, watchError) => {
      const healthy = this.healthy;
      if (healthy === undefined || this.stopped) return;
      const changed = healthy !== this.wasHealthy;
      this.wasHealthy = healthy;
      if (healthy) this.probe.stop();
      else this.probe.start();
      this.opts.onHealth({
        healthy,
        changed,
        ...(healthy ? {} : { error: this.lastError }),
        watch: { path, healthy: watchHealthy, error: watchError, status: w.lastErrorStatus },
      });
    });
    w.start();
    return w;
  }
}
