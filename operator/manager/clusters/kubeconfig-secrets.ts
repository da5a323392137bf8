// The Cluster API kubeconfig Secrets, and only those. Cluster API labels all
// of a cluster's Secrets with cluster.x-k8s.io/cluster-name: its CA and etcd
// keys, service-account keys, bootstrap data, as well as "<cluster>-kubeconfig".
// A label-selected informer of Secrets would receive and cache every one of
// them. Instead (controller-runtime's metadata-only watch plus a read of the
// one object needed):
//
// - one watch, metadata only (PartialObjectMetadata), of the labelled Secrets:
//   it carries names and resourceVersions, never data, and stays one watch
//   whether there are three Clusters or five hundred;
// - a GET by name of "<cluster>-kubeconfig" when the watch reports it added or
//   with a new resourceVersion (a rotation), and only then. No other Secret's
//   data ever reaches the operator.
//
// Rejected: a watch per Cluster with the field selector
// metadata.name=<cluster>-kubeconfig would also never see another Secret, but
// costs one long-lived management-cluster connection and one re-list per
// Cluster (hundreds, issue 21), and buys no narrower RBAC than this: a Role's
// resourceNames cannot name Secrets that do not exist yet, so it would have to
// be edited for every new Cluster. Both need list, watch and get on Secrets;
// see config/rbac/operator/cluster-role.yaml.
import { CoreV1Api, setHeaderOptions, type KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { CLUSTER_NAME_LABEL, kubeconfigSecretName } from '../../../api/index.js';
import { PARTIAL_OBJECT_METADATA_LIST, WatchedResource, type ChangeType } from '../runtime/informer.js';
import { errorText, httpStatus, type Logger } from '../runtime/log.js';

export interface KubeconfigSecretsOptions {
  kc: KubeConfig;
  /** Only this management namespace; all when undefined. */
  namespace?: string;
  log: Logger;
  relistMs?: number;
  /** A kubeconfig Secret was read anew (added, rotated) or is gone. */
  onChange: (namespace: string, cluster: string) => void;
  /** A failed GET is tried again after this, doubling up to 30 s. */
  retryBaseMs?: number;
  /**
   * GETs in flight at once: the first list of hundreds of Clusters must not send hundreds of
   * requests together (the API server's --max-requests-inflight, 400 by default, answers 429 past it).
   */
  maxInFlight?: number;
}

interface Read {
  resourceVersion?: string;
  secret: V1Secret;
}

/** The metadata object of a watch event (kind PartialObjectMetadata): name, namespace, labels, resourceVersion. */
type SecretMetadata = Pick<V1Secret, 'metadata'>;

export class KubeconfigSecrets {
  private readonly core: CoreV1Api;
  private readonly metadata: WatchedResource<SecretMetadata & { apiVersion?: string; kind?: string }>;
  /** namespace/name → the Secret as last read, by name. */
  private readonly reads = new Map<string, Read>();
  /** namespace/name → why the last read failed. */
  private readonly failures = new Map<string, { error: string; count: number }>();
  private readonly inFlight = new Set<string>();
  /** Waiting for a free place among maxInFlight, in arrival order: namespace/name → cluster. */
  private readonly waiting = new Map<string, { namespace: string; name: string; cluster: string }>();
  /** Changed again while being read: read once more when the read in flight is done. */
  private readonly again = new Set<string>();
  /** Read at least once (well or not): for synced. */
  private readonly attempted = new Set<string>();
  private readonly retries = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(private readonly opts: KubeconfigSecretsOptions) {
    this.core = opts.kc.makeApiClient(CoreV1Api);
    const ns = opts.namespace;
    const metadataOnly = setHeaderOptions('Accept', PARTIAL_OBJECT_METADATA_LIST);
    this.metadata = new WatchedResource({
      kc: opts.kc,
      path: `/api/v1${ns ? `/namespaces/${ns}` : ''}/secrets`,
      list: () =>
        ns
          ? this.core.listNamespacedSecret({ namespace: ns, labelSelector: CLUSTER_NAME_LABEL }, metadataOnly)
          : this.core.listSecretForAllNamespaces({ labelSelector: CLUSTER_NAME_LABEL }, metadataOnly),
      labelSelector: CLUSTER_NAME_LABEL,
      metadataOnly: true,
      relistMs: opts.relistMs,
    });
    this.metadata.onChange((type, meta) => this.changed(type, meta));
  }

  start(): void {
    this.stopped = false;
    this.metadata.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.waiting.clear();
    for (const t of this.retries.values()) clearTimeout(t);
    this.retries.clear();
    await this.metadata.stop();
  }

  /** The list came and every kubeconfig Secret in it has been read once (or failed to be). */
  get synced(): boolean {
    if (!this.metadata.synced) return false;
    return this.metadata.list().every((m) => {
      const key = kubeconfigKey(m);
      return key === undefined || this.attempted.has(key);
    });
  }

  get lastError(): string | undefined {
    return this.metadata.lastError;
  }

  async waitForFirstAttempt(timeoutMs: number): Promise<void> {
    await this.metadata.waitForFirstAttempt(timeoutMs);
  }

  /** The kubeconfig Secret as last read, if it exists and was read. */
  get(namespace: string, name: string): V1Secret | undefined {
    return this.reads.get(`${namespace}/${name}`)?.secret;
  }

  /** Why the Secret could not be read, if it exists and its last read failed. */
  problem(namespace: string, name: string): string | undefined {
    return this.failures.get(`${namespace}/${name}`)?.error;
  }

  private changed(type: ChangeType, meta: SecretMetadata): void {
    const key = kubeconfigKey(meta);
    if (key === undefined) return; // A CA, etcd or other Secret of the cluster: never read.
    const namespace = meta.metadata?.namespace ?? '';
    const cluster = meta.metadata?.labels?.[CLUSTER_NAME_LABEL] ?? '';
    if (type === 'delete') {
      this.forget(key);
      return this.opts.onChange(namespace, cluster);
    }
    // A re-list reports every object again: the same resourceVersion needs no new read.
    if (this.reads.get(key)?.resourceVersion === meta.metadata?.resourceVersion && !this.failures.has(key))
      return;
    this.read(namespace, meta.metadata?.name ?? '', cluster);
  }

  private read(namespace: string, name: string, cluster: string): void {
    const key = `${namespace}/${name}`;
    if (this.stopped) return;
    if (this.inFlight.has(key)) return void this.again.add(key);
    clearTimeout(this.retries.get(key));
    this.retries.delete(key);
    if (this.inFlight.size >= (this.opts.maxInFlight ?? 16))
      return void this.waiting.set(key, { namespace, name, cluster });
    this.waiting.delete(key);
    this.inFlight.add(key);
    this.core
      .readNamespacedSecret({ namespace, name })
      .then(
        (secret) => {
          this.failures.delete(key);
          // Deleted while being read: the watch's delete came first and must win.
          if (!this.metadata.get(name, namespace)) return this.reads.delete(key);
          this.reads.set(key, { resourceVersion: secret.metadata?.resourceVersion, secret });
        },
        (err: unknown) => {
          if (httpStatus(err) === 404) return this.forget(key);
          const count = (this.failures.get(key)?.count ?? 0) + 1;
          const error = `read Secret ${key}: ${errorText(err)}`;
          this.failures.set(key, { error, count });
          this.opts.log.warn('kubeconfig Secret not read', { cluster: `${namespace}/${cluster}`, error });
          // A retry of a failed read (as a work queue retries), not a poll: a success ends it.
          const delay = Math.min(30_000, (this.opts.retryBaseMs ?? 500) * 2 ** Math.min(count - 1, 10));
          const timer = setTimeout(() => {
            this.retries.delete(key);
            if (this.metadata.get(name, namespace)) this.read(namespace, name, cluster);
          }, delay);
          timer.unref();
          this.retries.set(key, timer);
        },
      )
      .finally(() => {
        this.inFlight.delete(key);
        this.attempted.add(key);
        if (this.again.delete(key)) this.read(namespace, name, cluster);
        else if (!this.stopped) this.opts.onChange(namespace, cluster);
        const [next] = this.waiting.values();
        if (next) this.read(next.namespace, next.name, next.cluster);
      });
  }

  private forget(key: string): void {
    this.waiting.delete(key);
    this.reads.delete(key);
    this.failures.delete(key);
    this.attempted.delete(key);
    clearTimeout(this.retries.get(key));
    this.retries.delete(key);
  }
}

/** namespace/name of a Cluster API kubeconfig Secret ("<cluster>-kubeconfig" of its cluster label), else undefined. */
function kubeconfigKey(meta: SecretMetadata): string | undefined {
  const cluster = meta.metadata?.labels?.[CLUSTER_NAME_LABEL];
  const name = meta.metadata?.name;
  if (!cluster || name !== kubeconfigSecretName(cluster)) return undefined;
  return `${meta.metadata?.namespace ?? ''}/${name}`;
}
