// Kubernetes mode: DNSRecordSet objects of one namespace, through
// @kubernetes/client-node's informer. makeInformer re-lists on 410 Gone but
// stops for good on any other error (API server restarting, network gone),
// so each failure starts a fresh informer after a backoff, and a fresh one
// also replaces the running one now and then (with jitter) in case a watch
// went quiet without an error. The store keeps the last delivered records
// meanwhile, so the server goes on answering while the API server is away.
import {
  CustomObjectsApi,
  KubeConfig,
  ListWatch,
  Watch,
  type Informer,
  type KubernetesListObject,
  type KubernetesObject,
  type ObjectCache,
} from '@kubernetes/client-node';
import { DNSRECORDSET_PLURAL, GROUP, VERSION, type DNSRecordSet } from '../../api/index.js';
import { WatchReconnectPolicy } from '../../process/watch-reconnect.js';
import type { Logger } from '../log.js';
import type { SourcedRecordSet } from '../zone/build.js';

export interface KubernetesSourceOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  /** Replace the informer with a freshly listed one about this often (±20 %). */
  resyncMs: number;
  backoffMinMs: number;
  backoffMaxMs: number;
  onRecords: (source: string, sets: SourcedRecordSet[]) => void;
  onError: (source: string) => void;
  log: Logger;
}

// The informer is typed with client-node's KubernetesObject; our DNSRecordSet type is narrower.
type RecordSetInformer = Informer<KubernetesObject> & ObjectCache<KubernetesObject>;

export class KubernetesSource {
  readonly name: string;
  private current: RecordSetInformer | undefined;
  private backoffMs: number;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly api: CustomObjectsApi;
  private readonly path: string;

  constructor(private readonly opts: KubernetesSourceOptions) {
    this.name = `kubernetes:${opts.namespace}`;
    this.backoffMs = opts.backoffMinMs;
    this.api = opts.kubeConfig.makeApiClient(CustomObjectsApi);
    this.path = `/apis/${GROUP}/${VERSION}/namespaces/${encodeURIComponent(opts.namespace)}/${DNSRECORDSET_PLURAL}`;
  }

  start(): void {
    void this.run('start');
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    void this.current?.stop();
    this.current = undefined;
  }

  /** Lists and watches with a new informer; on success it replaces the current one. */
  private async run(why: string): Promise<void> {
    if (this.stopped) return;
    const { namespace, log } = this.opts;
    const list = () =>
      this.api.listNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: DNSRECORDSET_PLURAL,
      }) as Promise<KubernetesListObject<KubernetesObject>>;
    // What makeInformer builds, plus the reconnect policy it does not pass on.
    const reconnect = new WatchReconnectPolicy();
    const informer = new ListWatch<KubernetesObject>(
      this.path,
      new Watch(this.opts.kubeConfig),
      list,
      false,
      undefined,
      undefined,
      { delayFn: reconnect.delayFn },
    );
    informer.on('connect', reconnect.connected);
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      void informer.stop();
      if (this.stopped) return;
      this.opts.onError(this.name);
      log.warn('DNSRecordSet watch failed; serving the last records, retrying', {
        source: this.name,
        error: describe(err),
        retryInMs: this.backoffMs,
      });
      this.schedule(this.backoffMs, 'retry');
      this.backoffMs = Math.min(this.backoffMs * 2, this.opts.backoffMaxMs);
    };
    const deliver = () => {
      if (this.current === informer && !this.stopped) this.opts.onRecords(this.name, this.snapshot(informer));
    };
    informer.on('add', deliver);
    informer.on('update', deliver);
    informer.on('delete', deliver);
    informer.on('error', fail);
    try {
      await informer.start();
    } catch (err) {
      fail(err);
    }
    if (failed || this.stopped) {
      void informer.stop();
      return;
    }
    const previous = this.current;
    this.current = informer;
    if (previous) void previous.stop();
    this.backoffMs = this.opts.backoffMinMs;
    log.info('DNSRecordSet informer synced', { source: this.name, why, recordSets: informer.list().length });
    deliver();
    const jitter = 0.8 + Math.random() * 0.4;
    this.schedule(this.opts.resyncMs * jitter, 'resync');
  }

  private schedule(ms: number, why: string): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.run(why), ms);
    this.timer.unref();
  }

  private snapshot(informer: RecordSetInformer): SourcedRecordSet[] {
    return informer
      .list()
      .map((obj) => ({
        source: `${this.name}/${obj.metadata?.name ?? '?'}`,
        set: buildInput(obj as DNSRecordSet),
      }))
      .sort((a, b) => (a.source < b.source ? -1 : 1));
  }
}

/**
 * What the build reads of a DNSRecordSet: its records, and the uid and resourceVersion that say
 * whether it changed. Every build copies its input into the build thread, so the rest of the
 * object (managed fields, labels, status) is left here.
 */
export function buildInput(obj: DNSRecordSet): DNSRecordSet {
  const { name, namespace, uid, resourceVersion } = obj.metadata;
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: { name, namespace, uid, resourceVersion },
    spec: obj.spec,
  };
}

function describe(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'object' && err !== null) return JSON.stringify(err);
  return String(err);
}
