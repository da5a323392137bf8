// A member cluster's identity (KEP-2149): the ClusterProperty objects
// cluster.clusterset.k8s.io (its id: its Cluster API name) and
// clusterset.k8s.io (its ClusterSet), kept while it is a member and removed
// (ours only) when it leaves. The CRD is created when the cluster lacks it.
// KEP-2149 says a member's id must not change while it is a member: a property
// someone else set (no managed-by label of ours) to another value is never
// overwritten; the cluster is left out of the ClusterSet instead, and says why.
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  ABOUT_GROUP,
  ABOUT_VERSION,
  CLUSTER_ID_PROPERTY,
  CLUSTERPROPERTY_CRD,
  CLUSTERSET_PROPERTY,
  CONTROLLER_NAME,
  MANAGED_BY_LABEL,
} from '../../api/index.js';
import type { OwnedObjectWriter } from '../manager/clusters/owned-writer.js';
import type { RemoteCluster } from '../manager/clusters/remote.js';
import { CLUSTER_PROPERTIES } from './kinds.js';
import { httpStatus } from '../manager/runtime/log.js';
import { canonical } from '../manager/runtime/equal.js';

type Property = KubernetesObject & { spec?: { value?: string } };

export function clusterPropertyObjects(clusterId: string, clusterSet: string): Property[] {
  return [
    [CLUSTER_ID_PROPERTY, clusterId],
    [CLUSTERSET_PROPERTY, clusterSet],
  ].map(([name, value]) => ({
    apiVersion: `${ABOUT_GROUP}/${ABOUT_VERSION}`,
    kind: 'ClusterProperty',
    metadata: { name, labels: { [MANAGED_BY_LABEL]: CONTROLLER_NAME } },
    spec: { value },
  }));
}

export function propertyContent(p: Property): string {
  return canonical({ managedBy: p.metadata?.labels?.[MANAGED_BY_LABEL] ?? '', value: p.spec?.value ?? '' });
}

/**
 * Why the cluster cannot be a member as `clusterId` of `clusterSet`: a property someone else set
 * to another value (KEP-2149: the id is not changed under a member). undefined when each property
 * is ours, absent, or someone else's with the same value (kept as it is).
 */
export function propertyConflict(
  existing: readonly KubernetesObject[],
  clusterId: string,
  clusterSet: string,
): string | undefined {
  const conflicts = clusterPropertyObjects(clusterId, clusterSet).flatMap((want) => {
    const name = want.metadata?.name ?? '';
    const found = existing.find((o) => o.metadata?.name === name) as Property | undefined;
    if (!found || found.metadata?.labels?.[MANAGED_BY_LABEL] === CONTROLLER_NAME) return [];
    const value = found.spec?.value ?? '';
    return value === want.spec?.value
      ? []
      : [
          `ClusterProperty ${name} is ${JSON.stringify(value)}, set by someone else, not ${JSON.stringify(want.spec?.value)}`,
        ];
  });
  return conflicts.length
    ? `${conflicts.join('; ')}: left out of ClusterSet ${clusterSet} (KEP-2149: a member's id does not change); delete that ClusterProperty, or set it to the value capi-dns gives, for the cluster to join`
    : undefined;
}

export class ClusterProperties {
  /** Clusters whose CRD is known to be there (checked once per client). */
  private readonly crdPresent = new WeakSet<RemoteCluster>();

  constructor(
    private readonly opts: {
      writer: OwnedObjectWriter;
      requestTimeoutMs: number;
      firstSyncTimeoutMs: number;
    },
  ) {}

  /**
   * The cluster is a member of `clusterSet` with id `clusterId`: both properties say so, unless
   * someone else's say otherwise (then nothing is written, and the conflict is returned).
   */
  async keep(
    remote: RemoteCluster,
    clusterId: string,
    clusterSet: string,
  ): Promise<{ written: number; conflict?: string }> {
    await this.ensureCrd(remote);
    const watch = remote.informer(CLUSTER_PROPERTIES);
    const why = await remote.synced([watch], this.opts.firstSyncTimeoutMs);
    if (why) throw new Error(`ClusterProperties of ${remote.key} not read: ${why}`);
    const conflict = propertyConflict(watch.list(), clusterId, clusterSet);
    if (conflict) return { written: 0, conflict };
    let written = 0;
    for (const object of clusterPropertyObjects(clusterId, clusterSet)) {
      const existing = watch.get(object.metadata?.name ?? '') as Property | undefined;
      // Someone else's with our value: theirs, left as it is.
      if (existing && existing.metadata?.labels?.[MANAGED_BY_LABEL] !== CONTROLLER_NAME) continue;
      const r = await this.opts.writer.ensure(remote, existing, {
        object,
        content: propertyContent(object),
        contentOf: propertyContent,
      });
      if (r.changed) written++;
    }
    return { written };
  }

  /** The cluster left its ClusterSet: our properties go (one someone else wrote stays). */
  async withdraw(remote: RemoteCluster): Promise<number> {
    const watch = remote.informer(CLUSTER_PROPERTIES);
    if (await remote.synced([watch], this.opts.firstSyncTimeoutMs)) return 0;
    let written = 0;
    for (const name of [CLUSTER_ID_PROPERTY, CLUSTERSET_PROPERTY]) {
      const existing = watch.get(name);
      if (existing?.metadata?.labels?.[MANAGED_BY_LABEL] !== CONTROLLER_NAME) continue;
      const gone = await this.opts.writer.delete(remote, {
        apiVersion: `${ABOUT_GROUP}/${ABOUT_VERSION}`,
        kind: 'ClusterProperty',
        namespace: '',
        name,
        uid: existing.metadata?.uid,
      });
      if (gone) written++;
    }
    return written;
  }

  private async ensureCrd(remote: RemoteCluster): Promise<void> {
    if (this.crdPresent.has(remote)) return;
    const crd = CLUSTERPROPERTY_CRD as unknown as KubernetesObject;
    try {
      await remote.objects.read({
        apiVersion: crd.apiVersion ?? '',
        kind: crd.kind ?? '',
        metadata: { name: crd.metadata?.name ?? '' },
      });
    } catch (err) {
      if (httpStatus(err) !== 404)
        throw new Error(`reading the ClusterProperty CRD of ${remote.key}: ${String(err)}`);
      await remote.write(
        'create CRD clusterproperties.about.k8s.io',
        this.opts.requestTimeoutMs,
        async () => {
          try {
            await remote.objects.create(crd);
          } catch (e) {
            if (httpStatus(e) !== 409) throw e;
          }
        },
      );
      // The watch may have failed on the missing resource: try it again now.
      remote.informer(CLUSTER_PROPERTIES).retryNow();
    }
    this.crdPresent.add(remote);
  }
}
