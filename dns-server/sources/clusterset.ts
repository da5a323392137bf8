// Multi-Cluster Services: this cluster's ServiceImports and MCS EndpointSlices
// (all namespaces), through runtime/restarting-informer.ts like the
// DNSRecordSet source, turned into the clusterset zone's record sets
// (clusterset-records.ts) at each change, never at query time. Until both
// informers have listed, nothing is delivered; a cluster without the MCS CRDs
// (the list answers 404), or a server not allowed to read them (403), has an
// empty clusterset zone, said once in the log.
import {
  CustomObjectsApi,
  DiscoveryV1Api,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { MCS_GROUP, MCS_SERVICE_NAME_LABEL, MCS_VERSION, SERVICEIMPORT_PLURAL } from '../../api/index.js';
import { httpStatus } from '../../runtime/kube-errors.js';
import { listWatch, RestartingInformer } from '../../runtime/restarting-informer.js';
import { clustersetRecordSets, type McsSliceLike, type ServiceImportLike } from './clusterset-records.js';
import { freshInformerPolicy, watchErrorText, type WatchSourceOptions } from './watch.js';

export interface ClustersetSourceOptions extends WatchSourceOptions {
  /** The clusterset zone, e.g. clusterset.local. */
  zone: string;
}

export class ClustersetSource {
  readonly name = 'clusterset';
  private readonly imports: RestartingInformer<KubernetesObject>;
  private readonly slices: RestartingInformer<KubernetesObject>;
  /** No MCS CRDs in this cluster (404): delivered as an empty zone. */
  private notInstalled = false;
  private lastError = '';

  constructor(private readonly opts: ClustersetSourceOptions) {
    const kc = opts.kubeConfig;
    const custom = kc.makeApiClient(CustomObjectsApi);
    const discovery = kc.makeApiClient(DiscoveryV1Api);
    const importsPath = `/apis/${MCS_GROUP}/${MCS_VERSION}/${SERVICEIMPORT_PLURAL}`;
    const common = freshInformerPolicy(opts);
    this.imports = new RestartingInformer<KubernetesObject>({
      ...common,
      make: () =>
        listWatch({
          kc,
          path: importsPath,
          list: () =>
            custom.listClusterCustomObject({
              group: MCS_GROUP,
              version: MCS_VERSION,
              plural: SERVICEIMPORT_PLURAL,
            }) as Promise<KubernetesListObject<KubernetesObject>>,
        }),
    });
    this.slices = new RestartingInformer<KubernetesObject>({
      ...common,
      make: () =>
        listWatch({
          kc,
          path: '/apis/discovery.k8s.io/v1/endpointslices',
          labelSelector: MCS_SERVICE_NAME_LABEL,
          list: () =>
            discovery.listEndpointSliceForAllNamespaces({ labelSelector: MCS_SERVICE_NAME_LABEL }) as Promise<
              KubernetesListObject<KubernetesObject>
            >,
        }),
    });
    for (const [what, informer] of [
      ['ServiceImport', this.imports],
      ['MCS EndpointSlice', this.slices],
    ] as const) {
      informer.onChange(() => this.deliver());
      informer.onSynced(() => {
        this.notInstalled = false;
        this.deliver();
      });
      informer.onFailure((err, retryInMs) => {
        const status = httpStatus(err);
        if (status === 404 || status === 403) {
          // The MCS API is not installed here (404), or this server may not read it (403, RBAC of
          // config/rbac/dns-server): an empty zone, not a failing source that keeps the server unready.
          if (!this.notInstalled)
            opts.log.warn(
              status === 404
                ? `no ${what} API in this cluster: the clusterset zone is empty`
                : `not allowed to list ${what}s (RBAC): the clusterset zone is empty`,
              { retryInMs },
            );
          this.notInstalled = true;
          this.deliver();
          return;
        }
        this.opts.onError(this.name);
        const error = watchErrorText(err);
        // A watch that keeps failing the same way is logged once, not at every retry.
        if (error !== this.lastError)
          opts.log.warn(`${what} watch failed; serving the last records, retrying`, {
            source: this.name,
            error,
            retryInMs,
          });
        this.lastError = error;
      });
    }
  }

  start(): void {
    this.imports.start();
    this.slices.start();
  }

  stop(): void {
    void this.imports.stop();
    void this.slices.stop();
  }

  private deliver(): void {
    if (this.notInstalled) return this.opts.onRecords(this.name, []);
    if (!this.imports.synced || !this.slices.synced) return;
    this.opts.onRecords(
      this.name,
      clustersetRecordSets(
        this.opts.zone,
        this.imports.list() as ServiceImportLike[],
        this.slices.list() as McsSliceLike[],
      ),
    );
  }
}
