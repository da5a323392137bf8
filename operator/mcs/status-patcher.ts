// Writes the status subresource of MCS objects in member clusters
// (ServiceExport conditions, ServiceImport status.clusters), through the
// operator's write gate.
import {
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { MCS_GROUP, MCS_VERSION } from '../../api/index.js';
import type { RemoteCluster } from '../manager/clusters/remote.js';

export class McsStatusPatcher {
  private readonly customApis = new WeakMap<RemoteCluster, CustomObjectsApi>();

  constructor(private readonly opts: { requestTimeoutMs?: number }) {}

  /**
   * Merge patch of an MCS object's status subresource: each list in it is complete, so replacing
   * it whole is right. The resourceVersion makes a status written over an object replaced or
   * changed meanwhile fail (and the reconcile retry).
   */
  patch(remote: RemoteCluster, plural: string, object: KubernetesObject, status: object): Promise<unknown> {
    const namespace = object.metadata?.namespace ?? '';
    const name = object.metadata?.name ?? '';
    return remote.write(
      `status of ${plural} ${namespace}/${name}`,
      this.opts.requestTimeoutMs ?? 10_000,
      () =>
        this.customOf(remote).patchNamespacedCustomObjectStatus(
          {
            group: MCS_GROUP,
            version: MCS_VERSION,
            namespace,
            plural,
            name,
            body: { metadata: { resourceVersion: object.metadata?.resourceVersion }, status },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
    );
  }

  private customOf(remote: RemoteCluster): CustomObjectsApi {
    let api = this.customApis.get(remote);
    if (!api) {
      api = remote.kc.makeApiClient(CustomObjectsApi);
      this.customApis.set(remote, api);
    }
    return api;
  }
}
