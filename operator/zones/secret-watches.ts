// Watches of the management-cluster Secrets the DNSZones name (key-secrets.ts),
// so that a key rotated by editing its Secret re-queues the DNSZones that name
// it, and only those: controllers are level-triggered, watches trigger.
//
// One watch per named Secret, by the field selector metadata.name=<name> in
// its namespace, metadata only (PartialObjectMetadata, as the kubeconfig
// Secrets' watch): a resourceVersion change is all that triggers, the
// reconcile reads the data by name (secrets.ts), and no other Secret of the
// namespace (service-account tokens, Helm releases) reaches the operator.
// DNSZones are few, so one watch per Secret costs a few connections; in
// return a namespace owner can grant list and watch on just that Secret
// (a Role with resourceNames: the API server authorizes a list or watch
// with a metadata.name field selector as a request for that name).
//
// Not in the manager's cache: its informers live as long as the process and
// count towards its sync, whereas these open and close as DNSZones name and
// stop naming Secrets, and one the operator may not watch (a namespace no
// Role grants) must leave the rest running. Such a Secret is still read
// by name each reconcile; watched() says it is not watched, and the
// reconciler reads it again on a timer (reconciler.ts).
import { CoreV1Api, setHeaderOptions, type KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { PARTIAL_OBJECT_METADATA_LIST, WatchedResource } from '../manager/runtime/informer.js';
import { errorText, type Logger } from '../manager/runtime/log.js';
import { secretKey, type SecretRef, type UnwatchedSecret } from './key-secrets.js';

/** The metadata object of a watch event (kind PartialObjectMetadata): name, namespace, resourceVersion. */
type SecretMetadata = Pick<V1Secret, 'metadata'> & { apiVersion?: string; kind?: string };

export interface SecretWatchesOptions {
  kc: KubeConfig;
  log: Logger;
  /** The Secret was created, changed or deleted (after its watch's first list). */
  onChange: (secret: SecretRef) => void;
}

interface Watch {
  ref: SecretRef;
  informer: WatchedResource<SecretMetadata>;
  /** The resourceVersion last seen ('' once deleted): a relist that finds it unchanged triggers nothing. */
  seen?: string;
  /** The failure last logged: a watch that keeps failing the same way logs once. */
  reported?: string;
}

export class SecretWatches {
  private readonly core: CoreV1Api;
  private readonly watches = new Map<string, Watch>();

  constructor(private readonly opts: SecretWatchesOptions) {
    this.core = opts.kc.makeApiClient(CoreV1Api);
  }

  /** Watches exactly these Secrets: opens the new ones' watches, stops the others'. */
  watchOnly(secrets: ReadonlyMap<string, SecretRef>): void {
    for (const [key, watch] of this.watches)
      if (!secrets.has(key)) {
        this.watches.delete(key);
        void watch.informer.stop();
      }
    for (const [key, ref] of secrets) if (!this.watches.has(key)) this.open(key, ref);
  }

  /**
   * The Secrets whose watch has tried and does not run (refused, or failing): their rotations
   * arrive on the reconciler's timer. Each with the HTTP status of the last failure, if the API
   * server answered. For the capi_dns_zone_secret_unwatched metric.
   */
  unwatched(): UnwatchedSecret[] {
    return [...this.watches.values()]
      .filter((w) => w.informer.tried && !w.informer.healthy)
      .map((w) => ({ ref: w.ref, status: w.informer.lastErrorStatus }));
  }

  /** Whether a change of the Secret reaches onChange now (its watch has listed and runs). */
  watched(secret: SecretRef): boolean {
    return this.watches.get(secretKey(secret))?.informer.healthy ?? false;
  }

  async stop(): Promise<void> {
    const all = [...this.watches.values()];
    this.watches.clear();
    await Promise.all(all.map((w) => w.informer.stop()));
  }

  private open(key: string, ref: SecretRef): void {
    const fieldSelector = `metadata.name=${ref.name}`;
    const informer = new WatchedResource<SecretMetadata>({
      kc: this.opts.kc,
      path: `/api/v1/namespaces/${ref.namespace}/secrets`,
      list: () =>
        this.core.listNamespacedSecret(
          { namespace: ref.namespace, fieldSelector },
          setHeaderOptions('Accept', PARTIAL_OBJECT_METADATA_LIST),
        ),
      fieldSelector,
      metadataOnly: true,
      maxBackoffMs: 30_000,
    });
    const watch: Watch = { ref, informer };
    informer.onChange((type, meta) => {
      const version = type === 'delete' ? '' : (meta.metadata?.resourceVersion ?? '');
      if (version === watch.seen) return;
      watch.seen = version;
      // The first list: the DNSZone that now names the Secret was queued by its own change.
      if (informer.synced) this.opts.onChange(ref);
    });
    informer.onFailure((err, retryInMs) => {
      const error = errorText(err);
      if (error === watch.reported) return;
      watch.reported = error;
      this.opts.log.warn('cannot watch a Secret a DNSZone names: its changes are read on a timer', {
        secret: key,
        error,
        status: informer.lastErrorStatus,
        retryInMs,
      });
    });
    informer.onHealth((healthy) => {
      if (!healthy || watch.reported === undefined) return;
      watch.reported = undefined;
      this.opts.log.info('watching a Secret a DNSZone names', { secret: key });
    });
    this.watches.set(key, watch);
    informer.start();
  }
}
