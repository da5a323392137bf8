// Keeps one GatewayDNS's mirror in one consuming workload cluster: the
// Service, then one EndpointSlice per source cluster and family. Compare
// first and write only what differs (the owned-object writer,
// clusters/owned-writer.ts), so that a restart that computes the same mirror
// writes nothing. Objects it did not create are never changed: a name taken
// by anyone else is a Conflict for that cluster.
import type { KubernetesObject, V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { SERVICE_NAME_LABEL, MCS_SOURCE_CLUSTER_LABEL } from '../../../../api/index.js';
import type { ClusterCache } from '../../../manager/clusters/cache.js';
import { NAMESPACES, SERVICES } from '../../../manager/clusters/kinds.js';
import { MIRROR_ENDPOINT_SLICES } from './kinds.js';
import type { OwnedObjectWriter } from '../../../manager/clusters/owned-writer.js';
import type { RemoteCluster } from '../../../manager/clusters/remote.js';
import { withTimeout } from '../../../manager/runtime/equal.js';
import { errorText, httpStatus } from '../../../manager/runtime/log.js';
import type { WatchedResource } from '../../../manager/runtime/informer.js';
import {
  mirrorSliceLabels,
  mirrorServiceLabels,
  serviceKindOf,
  type MirrorPlan,
  type MirrorTarget,
  type SliceManifest,
} from './desired.js';
import { ownershipOf, serviceContent, sliceContent, takenBy } from './ownership.js';

export const MIRROR_STATES = [
  /** The Service and the slices of every source cluster are as desired. */
  'InPlace',
  /** The Service's name (or a slice's) is taken by an object capi-dns did not create for this GatewayDNS. */
  'Conflict',
  /** The cluster has no such namespace: it does not consume the mirror. */
  'NamespaceNotFound',
  /** The cluster is a selected one whose Service is the mirror's namespace/name: the Service itself lives there. */
  'SourceCluster',
  /** No selected cluster has the Service: there is nothing to mirror (ours withdrawn). */
  'NoSource',
  /** The consuming cluster's API server does not answer: what is there stays. */
  'Unreachable',
  /** A write was refused. */
  'Failed',
] as const;
export type MirrorState = (typeof MIRROR_STATES)[number];

export interface MirrorOutcome {
  cluster: string;
  /** "namespace/name" of the mirror Service in that cluster. */
  service: string;
  state: MirrorState;
  message?: string;
  endpointSlices?: number;
  /** Objects created, changed or deleted by this call. */
  writes: number;
}

export interface MirrorWriterOptions {
  clusters: ClusterCache;
  /** The operator's one writer of owned objects, shared with the record sets. */
  writer: OwnedObjectWriter;
  firstSyncTimeoutMs: number;
  requestTimeoutMs: number;
}

interface Opened {
  remote: RemoteCluster;
  services: WatchedResource<V1Service>;
  slices: WatchedResource<V1EndpointSlice>;
}

export class MirrorWriter {
  constructor(private readonly opts: MirrorWriterOptions) {}

  /**
   * Makes the cluster's mirror what `plan` says. Slices of the `kept` source
   * clusters (unreachable, nothing remembered since a restart) are left as
   * they are: their last known endpoints stay.
   */
  async apply(
    namespace: string,
    cluster: string,
    target: MirrorTarget,
    plan: MirrorPlan,
    kept: readonly string[] = [],
  ): Promise<MirrorOutcome> {
    const outcome = this.outcome(cluster, target);
    const opened = await this.open(namespace, cluster, target);
    if ('state' in opened) return { ...outcome, ...opened };
    const { remote, services, slices } = opened;
    try {
      let writes = 0;
      const ours = this.ourSlices(slices, target);
      const existing =
        services.get(target.name, target.namespace) ?? (await this.findService(remote, target));
      if (existing) {
        const owner = ownershipOf(existing, target);
        if (owner.owner !== 'ours') {
          // Slices of ours under this service name would add endpoints to someone else's Service.
          writes += await this.deleteSlices(remote, ours);
          return {
            ...outcome,
            state: 'Conflict',
            message: takenBy('Service', target.namespace, target.name, owner),
            writes,
          };
        }
      }
      if ('none' in plan) {
        if (kept.length && existing)
          return {
            ...outcome,
            state: 'InPlace',
            endpointSlices: ours.length,
            message: `kept as it is: ${plan.none}`,
            writes,
          };
        writes += await this.deleteSlices(remote, ours);
        if (existing)
          writes += await this.deleteObject(remote, existing as KubernetesObject, 'v1', 'Service');
        return { ...outcome, state: 'NoSource', message: plan.none, writes };
      }
      const { desired } = plan;
      const serviceKeys = Object.keys(mirrorServiceLabels(target));
      const service = await this.opts.writer.ensure(remote, existing, {
        object: desired.service as KubernetesObject,
        content: serviceContent(desired.service, serviceKeys),
        contentOf: (o: V1Service) => serviceContent(o, serviceKeys),
        // clusterIP None, a cluster IP and ExternalName do not turn into each other in place.
        mustRecreate: (o: V1Service) => serviceKindOf(o) !== desired.kind,
      });
      const uid = service.applied?.metadata?.uid ?? existing?.metadata?.uid;
      if (service.changed) writes += service.recreated ? 2 : 1;
      const conflicts: string[] = [];
      const wanted = new Set<string>();
      for (const manifest of desired.slices) {
        const slice = withOwner(manifest, target.name, uid ?? '');
        const name = slice.metadata.name;
        wanted.add(name);
        const found =
          slices.get(name, target.namespace) ?? (await this.findSlice(remote, target.namespace, name));
        if (found) {
          const owner = ownershipOf(found, target);
          if (owner.owner !== 'ours') {
            conflicts.push(takenBy('EndpointSlice', target.namespace, name, owner));
            continue;
          }
        }
        const keys = Object.keys(mirrorSliceLabels(target, ''));
        const written = await this.opts.writer.ensure(remote, found, {
          object: slice as unknown as KubernetesObject,
          content: sliceContent(slice, keys),
          contentOf: (o: V1EndpointSlice) => sliceContent(o, keys),
        });
        if (written.changed) writes++;
      }
      const stale = ours.filter(
        (s) =>
          !wanted.has(s.metadata?.name ?? '') &&
          !kept.includes(s.metadata?.labels?.[MCS_SOURCE_CLUSTER_LABEL] ?? ''),
      );
      writes += await this.deleteSlices(remote, stale);
      const inPlace =
        ours.filter((s) => kept.includes(s.metadata?.labels?.[MCS_SOURCE_CLUSTER_LABEL] ?? '')).length +
        wanted.size -
        conflicts.length;
      if (conflicts.length)
        return {
          ...outcome,
          state: 'Conflict',
          message: conflicts.join('; '),
          endpointSlices: inPlace,
          writes,
        };
      return {
        ...outcome,
        state: 'InPlace',
        endpointSlices: inPlace,
        ...(desired.notes.length ? { message: desired.notes.join('; ') } : {}),
        writes,
      };
    } catch (err) {
      return { ...outcome, ...failure(err) };
    }
  }

  /** Withdraws this GatewayDNS's mirror from the cluster: only objects that are ours. */
  async remove(namespace: string, cluster: string, target: MirrorTarget): Promise<MirrorOutcome> {
    const outcome = this.outcome(cluster, target);
    const opened = await this.open(namespace, cluster, target);
    // No namespace, no mirror; an unreachable cluster is asked again on the next reconcile.
    if ('state' in opened) return { ...outcome, ...opened };
    const { remote, services, slices } = opened;
    try {
      let writes = await this.deleteSlices(remote, this.ourSlices(slices, target));
      const existing = services.get(target.name, target.namespace);
      if (existing && ownershipOf(existing, target).owner === 'ours')
        writes += await this.deleteObject(remote, existing as KubernetesObject, 'v1', 'Service');
      return { ...outcome, state: 'NoSource', message: 'withdrawn', writes };
    } catch (err) {
      return { ...outcome, ...failure(err) };
    }
  }

  private outcome(cluster: string, target: MirrorTarget): MirrorOutcome {
    return { cluster, service: `${target.namespace}/${target.name}`, state: 'InPlace', writes: 0 };
  }

  private async open(
    namespace: string,
    cluster: string,
    target: MirrorTarget,
  ): Promise<Opened | { state: MirrorState; message: string }> {
    const remote = this.opts.clusters.get(namespace, cluster);
    if (!remote)
      return { state: 'Unreachable', message: this.opts.clusters.problem(namespace, cluster) ?? 'no client' };
    const namespaces = remote.informer(NAMESPACES);
    const why = await remote.synced([namespaces], this.opts.firstSyncTimeoutMs);
    if (why) return { state: 'Unreachable', message: why };
    if (!namespaces.get(target.namespace))
      return { state: 'NamespaceNotFound', message: `no namespace ${target.namespace}: not a consumer` };
    const services = remote.informer(SERVICES, target.namespace, { releasable: true });
    const slices = remote.informer(MIRROR_ENDPOINT_SLICES, target.namespace, { releasable: true });
    const reason = await remote.synced([services, slices], this.opts.firstSyncTimeoutMs);
    if (reason) return { state: 'Unreachable', message: reason };
    return { remote, services, slices };
  }

  private ourSlices(slices: WatchedResource<V1EndpointSlice>, target: MirrorTarget): V1EndpointSlice[] {
    return slices
      .list(target.namespace)
      .filter(
        (s) =>
          s.metadata?.labels?.[SERVICE_NAME_LABEL] === target.name && ownershipOf(s, target).owner === 'ours',
      );
  }

  /**
   * A Service the cache does not show: asked for by name before anything is
   * created, so that a cache lagging behind someone else's create never makes
   * us apply onto their object (a list by field selector: no get permission needed).
   */
  private async findService(remote: RemoteCluster, target: MirrorTarget): Promise<V1Service | undefined> {
    const list = await withTimeout(
      remote.core.listNamespacedService({
        namespace: target.namespace,
        fieldSelector: `metadata.name=${target.name}`,
      }),
      this.opts.requestTimeoutMs,
      `list Service ${target.namespace}/${target.name}`,
    );
    return list.items[0];
  }

  private async findSlice(
    remote: RemoteCluster,
    namespace: string,
    name: string,
  ): Promise<V1EndpointSlice | undefined> {
    const list = await withTimeout(
      remote.discovery.listNamespacedEndpointSlice({ namespace, fieldSelector: `metadata.name=${name}` }),
      this.opts.requestTimeoutMs,
      `list EndpointSlice ${namespace}/${name}`,
    );
    return list.items[0];
  }

  private async deleteSlices(remote: RemoteCluster, slices: V1EndpointSlice[]): Promise<number> {
    let n = 0;
    for (const s of slices)
      n += await this.deleteObject(remote, s as KubernetesObject, 'discovery.k8s.io/v1', 'EndpointSlice');
    return n;
  }

  /** Deletes the very object seen (UID precondition): never one created since under the same name. */
  private async deleteObject(
    remote: RemoteCluster,
    object: KubernetesObject,
    apiVersion: string,
    kind: string,
  ): Promise<number> {
    const { name = '', namespace = '', uid } = object.metadata ?? {};
    return (await this.opts.writer.delete(remote, { apiVersion, kind, namespace, name, uid })) ? 1 : 0;
  }
}

function withOwner(
  slice: SliceManifest,
  service: string,
  uid: string,
): SliceManifest & {
  metadata: {
    ownerReferences: { apiVersion: string; kind: string; name: string; uid: string; controller: boolean }[];
  };
} {
  // No blockOwnerDeletion: that would need update on services/finalizers, and the operator deletes its slices itself.
  return {
    ...slice,
    metadata: {
      ...slice.metadata,
      ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: service, uid, controller: true }],
    },
  };
}

/** No answer at all (refused, reset, timed out) is the cluster being away; an HTTP error is a refused write. */
function failure(err: unknown): { state: MirrorState; message: string } {
  return { state: httpStatus(err) === undefined ? 'Unreachable' : 'Failed', message: errorText(err) };
}
