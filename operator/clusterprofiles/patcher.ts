// A ClusterProfile's writes in the management cluster, both by server-side
// apply with the operator's one field manager: the object (labels, owner,
// spec) and, apart, the status subresource. A field no longer applied (a
// property once the namespace leaves its ClusterSet) is removed by the API
// server, which a merge patch would not do.
import {
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import {
  CLUSTERPROFILE_PLURAL,
  CONTROLLER_NAME,
  INVENTORY_GROUP,
  INVENTORY_VERSION,
  type ClusterProfile,
  type ClusterProfileStatus,
} from '../../api/index.js';
import { withTimeout } from '../manager/runtime/equal.js';

export class ClusterProfilePatcher {
  private readonly objects: KubernetesObjectApi;
  private readonly custom: CustomObjectsApi;

  constructor(
    management: KubeConfig,
    private readonly requestTimeoutMs: number,
  ) {
    this.objects = KubernetesObjectApi.makeApiClient(management);
    this.custom = management.makeApiClient(CustomObjectsApi);
  }

  async apply(profile: ClusterProfile & KubernetesObject): Promise<ClusterProfile> {
    const { namespace, name } = profile.metadata;
    return (await withTimeout(
      this.objects.patch(profile, undefined, undefined, CONTROLLER_NAME, true, PatchStrategy.ServerSideApply),
      this.requestTimeoutMs,
      `apply of clusterprofile ${namespace}/${name}`,
    )) as ClusterProfile;
  }

  async applyStatus(namespace: string, name: string, status: ClusterProfileStatus): Promise<void> {
    await withTimeout(
      this.custom.patchNamespacedCustomObjectStatus(
        {
          group: INVENTORY_GROUP,
          version: INVENTORY_VERSION,
          plural: CLUSTERPROFILE_PLURAL,
          namespace,
          name,
          fieldManager: CONTROLLER_NAME,
          force: true,
          body: {
            apiVersion: `${INVENTORY_GROUP}/${INVENTORY_VERSION}`,
            kind: 'ClusterProfile',
            metadata: { name, namespace },
            status,
          },
        },
        setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
      ),
      this.requestTimeoutMs,
      `status of clusterprofile ${namespace}/${name}`,
    );
  }
}
