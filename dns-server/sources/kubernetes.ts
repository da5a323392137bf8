// Kubernetes mode: DNSRecordSet objects of one namespace, through
// runtime/restarting-informer.ts with a fresh informer per attempt (watch.ts).
// The store keeps the last delivered records meanwhile, so the server
// goes on answering while the API server is away.
import { CustomObjectsApi, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { DNSRECORDSET_PLURAL, GROUP, VERSION, type DNSRecordSet } from '../../api/index.js';
import { listWatch, RestartingInformer } from '../../runtime/restarting-informer.js';
import type { SourcedRecordSet } from '../zone/compile.js';
import { freshInformerPolicy, reportWatchFailure, type WatchSourceOptions } from './watch.js';

export interface KubernetesSourceOptions extends WatchSourceOptions {
  namespace: string;
}

export class KubernetesSource {
  readonly name: string;
  // Typed with client-node's KubernetesObject; our DNSRecordSet type is narrower.
  private readonly informer: RestartingInformer<KubernetesObject>;

  constructor(private readonly opts: KubernetesSourceOptions) {
    const { namespace, log } = opts;
    this.name = `kubernetes:${namespace}`;
    const api = opts.kubeConfig.makeApiClient(CustomObjectsApi);
    const path = `/apis/${GROUP}/${VERSION}/namespaces/${encodeURIComponent(namespace)}/${DNSRECORDSET_PLURAL}`;
    const list = () =>
      api.listNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: DNSRECORDSET_PLURAL,
      }) as Promise<KubernetesListObject<KubernetesObject>>;
    this.informer = new RestartingInformer<KubernetesObject>({
      make: () => listWatch({ kc: opts.kubeConfig, path, list }),
      ...freshInformerPolicy(opts),
    });
    this.informer.onChange(() => this.deliver());
    this.informer.onSynced((why) => {
      log.info('DNSRecordSet informer synced', {
        source: this.name,
        why: why === 'relist' ? 'resync' : why,
        recordSets: this.informer.list().length,
      });
      this.deliver();
    });
    this.informer.onFailure(
      reportWatchFailure(opts, this.name, 'DNSRecordSet watch failed; serving the last records, retrying'),
    );
  }

  start(): void {
    this.informer.start();
  }

  stop(): void {
    void this.informer.stop();
  }

  /** The helper reports nothing once stopped. */
  private deliver(): void {
    this.opts.onRecords(this.name, this.snapshot());
  }

  private snapshot(): SourcedRecordSet[] {
    return this.informer
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
