// Multi-Cluster Services, agentless: one reconcile per exported Service of a
// ClusterSet ("<management namespace>|<namespace>|<name>"). It reads every
// member cluster's ServiceExport, Service and EndpointSlices from the shared
// watches, plans the import (desired.ts, pure), writes the ServiceImport, the
// derived Service and the MCS EndpointSlices into every member that has the
// namespace through the operator's one owned-object writer, and then reports
// Valid, Conflict and Ready on each ServiceExport. A member that does not
// answer keeps what it had, and its exports count as last seen.
import {
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
  type V1EndpointSlice,
  type V1Service,
} from '@kubernetes/client-node';
import {
  MCS_GROUP,
  MCS_VERSION,
  SERVICEEXPORT_PLURAL,
  SERVICEIMPORT_PLURAL,
  type Condition,
} from '../../api/index.js';
import type { OwnedObjectWriter } from '../clusters/owned-writer.js';
import type { RemoteCluster } from '../clusters/remote.js';
import { NAMESPACES, SERVICES, SERVICE_ENDPOINT_SLICES } from '../clusters/kinds.js';
import { DERIVED_SERVICES, MCS_ENDPOINT_SLICES, SERVICE_EXPORTS, SERVICE_IMPORTS } from './kinds.js';
import type { WorkloadWatches } from '../clusters/workload-watches.js';
import { EXPORT_CONDITIONS, setCondition } from '../model/conditions.js';
import { sameJson } from '../runtime/equal.js';
import { errorText, type Logger } from '../runtime/log.js';
import { planForMembers, type ExportCondition, type ImportDesired } from './desired.js';
import {
  allocatedIps,
  derivedServiceContent,
  derivedServiceName,
  derivedServiceObject,
  isOurs,
  serviceImportContent,
  serviceImportObject,
  serviceImportStatus,
  sliceContent,
  sliceObjects,
  type ServiceImportObject,
} from './objects.js';
import { observeExport, type ExportObservation } from './observe.js';
import type { McsMetrics } from './metrics.js';

/** A member of a ClusterSet: its Cluster API name (its cluster id) and its client, if one could be built. */
export interface Member {
  name: string;
  remote?: RemoteCluster;
  /** Paused or being deleted (Cluster API): read as last seen, never written. */
  frozen: boolean;
  /** Its Cluster's labels: what an export's export-to annotation selects. */
  labels?: Record<string, string>;
}

export interface McsReconcilerOptions {
  /** The members of the management namespace's ClusterSet; none when it has not opted in. */
  members: (managementNamespace: string) => Member[];
  /** Every Cluster of the management namespace (members or not): where withdrawals look. */
  allClusters: (managementNamespace: string) => Member[];
  writer: OwnedObjectWriter;
  watches: WorkloadWatches;
  log: Logger;
  /** Where the ServiceExports in Conflict are counted (capi_dns_serviceexport_conflict). */
  metrics?: McsMetrics;
  firstSyncTimeoutMs?: number;
  requestTimeoutMs?: number;
}

export interface McsSummary {
  written: number;
  failed: string[];
}

/** One multi-cluster Service: a Service name exported or imported in the ClusterSet of a management namespace. */
export interface ServiceKey {
  /** The management namespace whose Clusters are the ClusterSet. */
  managementNamespace: string;
  namespace: string;
  name: string;
}

/** The id of a ServiceKey in maps and watch holds. */
export function serviceKeyId(key: ServiceKey): string {
  return `${key.managementNamespace}|${key.namespace}|${key.name}`;
}

function parseServiceKeyId(id: string): ServiceKey {
  const [managementNamespace = '', namespace = '', name = ''] = id.split('|');
  return { managementNamespace, namespace, name };
}

export class McsReconciler {
  /** Per key and exporting cluster, its export as last seen: kept while the cluster does not answer. */
  private readonly lastSeen = new Map<string, Map<string, ExportObservation>>();
  private readonly customApis = new WeakMap<RemoteCluster, CustomObjectsApi>();

  constructor(private readonly opts: McsReconcilerOptions) {}

  /** Another replica serves its namespace now: what this one remembers of the key goes, nothing is written. */
  release(key: ServiceKey): void {
    const id = serviceKeyId(key);
    this.lastSeen.delete(id);
    this.opts.watches.drop(`mcs:${id}`);
  }

  /** The keys this reconciler remembers something of, in the management namespaces `affected` names. */
  keysWhere(affected: (managementNamespace: string) => boolean): ServiceKey[] {
    return [...this.lastSeen.keys()]
      .map(parseServiceKeyId)
      .filter((key) => affected(key.managementNamespace));
  }

  async reconcile(service: ServiceKey): Promise<McsSummary> {
    const { managementNamespace, namespace, name } = service;
    const key = serviceKeyId(service);
    const members = this.opts.members(managementNamespace);
    const observed = await this.observe(key, members, namespace, name);
    const plan = planForMembers(namespace, name, observed, members);
    const summary: McsSummary = { written: 0, failed: [] };
    // Members get the import; every other cluster of the namespace (one that left) loses ours.
    // All clusters at once: the write gate bounds what is in flight, per cluster and in all.
    await Promise.all(
      this.opts.allClusters(managementNamespace).map(async (cluster) => {
        const { remote } = cluster;
        if (!remote || cluster.frozen) return;
        const importHere = plan.importOf.get(cluster.name);
        try {
          summary.written += await this.applyTo(remote, namespace, name, importHere);
        } catch (err) {
          summary.failed.push(`${cluster.name}: ${errorText(err)}`);
        }
      }),
    );
    summary.failed.sort();
    await this.reportExports(members, namespace, name, plan.conditions, summary.failed);
    if (!observed.length) this.lastSeen.delete(key);
    return summary;
  }

  /** The exports of every member, as their watches show them now, or as last seen when a member does not answer. */
  private async observe(
    key: string,
    members: Member[],
    namespace: string,
    name: string,
  ): Promise<ExportObservation[]> {
    const memory = this.lastSeen.get(key) ?? new Map<string, ExportObservation>();
    this.lastSeen.set(key, memory);
    const needs: string[] = [];
    const out: ExportObservation[] = [];
    const timeout = this.opts.firstSyncTimeoutMs ?? 5_000;
    // The last seen of a cluster that does not answer, marked since when (kept stable, so that
    // the marked slices are written once, not at every reconcile).
    const lastSeen = (m: Member, unreachable: boolean) => {
      const last = memory.get(m.name);
      if (!last) return;
      const marked =
        unreachable && !last.unreachableSince
          ? { ...last, unreachableSince: new Date().toISOString() }
          : last;
      memory.set(m.name, marked);
      out.push(marked);
    };
    for (const m of members) {
      const remote = m.remote;
      const exports = remote?.informer(SERVICE_EXPORTS);
      if (!remote || !exports || m.frozen || (await remote.synced([exports], timeout))) {
        // A paused or deleting Cluster is frozen on purpose: kept as it was, not marked.
        lastSeen(m, !m.frozen);
        continue;
      }
      const serviceExport = exports.get(name, namespace);
      if (!serviceExport) {
        memory.delete(m.name);
        continue;
      }
      needs.push(`${remote.key}|${namespace}`);
      // Held before first use, so that no GatewayDNS letting go of the same namespace stops them.
      this.opts.watches.hold(`mcs:${key}`, { Service: needs, EndpointSlice: needs, MirrorEndpointSlice: [] });
      const services = remote.informer(SERVICES, namespace, { releasable: true });
      const slices = remote.informer(SERVICE_ENDPOINT_SLICES, namespace, { releasable: true });
      if (await remote.synced([services, slices], timeout)) {
        lastSeen(m, true);
        continue;
      }
      const seen = observeExport(
        m.name,
        serviceExport as Parameters<typeof observeExport>[1],
        services.get(name, namespace),
        slices.list(namespace),
      );
      memory.set(m.name, seen);
      out.push(seen);
    }
    this.opts.watches.hold(`mcs:${key}`, { Service: needs, EndpointSlice: needs, MirrorEndpointSlice: [] });
    return out;
  }

  /** One cluster: the import's objects as planned, or none of ours. Returns how many writes it made. */
  private async applyTo(
    remote: RemoteCluster,
    namespace: string,
    name: string,
    desired: ImportDesired | undefined,
  ): Promise<number> {
    const timeout = this.opts.firstSyncTimeoutMs ?? 5_000;
    const imports = remote.informer(SERVICE_IMPORTS);
    const derived = remote.informer(DERIVED_SERVICES);
    const mcsSlices = remote.informer(MCS_ENDPOINT_SLICES);
    const namespaces = remote.informer(NAMESPACES);
    const why = await remote.synced([imports, derived, mcsSlices, namespaces], timeout);
    if (why) throw new Error(`cluster ${remote.key} not read: ${why}`);
    // Namespace sameness: a cluster without the namespace gets nothing there.
    const want = desired && namespaces.get(namespace) ? desired : undefined;
    const writer = this.opts.writer;
    let written = 0;

    const existingDerived = derived.get(derivedServiceName(name), namespace) as V1Service | undefined;
    let ips: { ips: string[]; ipFamilies: string[] } | undefined;
    if (want?.spec.type === 'ClusterSetIP') {
      const object = derivedServiceObject(namespace, name, want);
      const r = await writer.ensure(remote, existingDerived, {
        object,
        content: derivedServiceContent(object),
        contentOf: derivedServiceContent,
      });
      if (r.changed) written++;
      ips = allocatedIps((r.applied as V1Service | undefined) ?? existingDerived);
    } else if (existingDerived && isOurs(existingDerived, name)) {
      if (await writer.delete(remote, refOf('v1', 'Service', existingDerived))) written++;
    }

    const existingImport = imports.get(name, namespace) as ServiceImportObject | undefined;
    if (want) {
      const object = serviceImportObject(namespace, name, want, ips);
      const r = await writer.ensure(remote, existingImport, {
        object,
        content: serviceImportContent(object),
        contentOf: serviceImportContent,
      });
      if (r.changed) written++;
      const current = (r.applied as ServiceImportObject | undefined) ?? existingImport;
      if (await this.writeImportStatus(remote, current, want)) written++;
    } else if (existingImport && isOurs(existingImport, name)) {
      if (
        await writer.delete(remote, refOf('multicluster.x-k8s.io/v1beta1', 'ServiceImport', existingImport))
      )
        written++;
    }

    const present = new Map(
      (mcsSlices.list(namespace) as V1EndpointSlice[])
        .filter((s) => isOurs(s as KubernetesObject, name))
        .map((s) => [s.metadata?.name ?? '', s]),
    );
    const wanted = want ? sliceObjects(namespace, name, want) : [];
    for (const object of wanted) {
      const existing = present.get(object.metadata?.name ?? '');
      present.delete(object.metadata?.name ?? '');
      if (
        (
          await writer.ensure(remote, existing, {
            object,
            content: sliceContent(object),
            contentOf: sliceContent,
          })
        ).changed
      )
        written++;
    }
    for (const stale of present.values())
      if (await writer.delete(remote, refOf('discovery.k8s.io/v1', 'EndpointSlice', stale))) written++;
    return written;
  }

  /**
   * Valid and Conflict as planned, and Ready: True once every member that answers holds the
   * import, False with the failures otherwise; an invalid export is not exported (Pending).
   */
  private async reportExports(
    members: Member[],
    namespace: string,
    name: string,
    conditions: Map<string, ExportCondition[]>,
    failed: string[],
  ): Promise<void> {
    const now = new Date();
    for (const m of members) {
      const remote = m.remote;
      if (!remote || m.frozen) continue;
      const exports = remote.informer(SERVICE_EXPORTS);
      const serviceExport = exports.get(name, namespace) as
        (KubernetesObject & { status?: { conditions?: Condition[] } }) | undefined;
      const planned = conditions.get(m.name);
      const conflictKey = `${remote.key}/${namespace}/${name}`;
      if (!serviceExport) this.opts.metrics?.exportConflicts.delete(conflictKey);
      if (!serviceExport || !planned || remote.unreachableReason(exports)) continue;
      const valid = planned.find((c) => c.type === EXPORT_CONDITIONS.Valid)?.status === 'True';
      const ready: ExportCondition = !valid
        ? {
            type: EXPORT_CONDITIONS.Ready,
            status: 'False',
            reason: 'Pending',
            message: 'not exported: the export is not valid',
          }
        : failed.length
          ? {
              type: EXPORT_CONDITIONS.Ready,
              status: 'False',
              reason: 'Failed',
              message: `not yet imported everywhere (retried): ${failed.join('; ')}`,
            }
          : {
              type: EXPORT_CONDITIONS.Ready,
              status: 'True',
              reason: 'Exported',
              message:
                'imported into every member cluster of the ClusterSet it is exported to (all, or those its export-to annotation selects) that has the namespace',
            };
      const previous = serviceExport.status?.conditions ?? [];
      let next: Condition[] = previous.filter(
        (c) => !(c.type === EXPORT_CONDITIONS.Conflict && !planned.some((p) => p.type === c.type)),
      );
      for (const c of [...planned, ready])
        next = setCondition(next, { ...c, observedGeneration: serviceExport.metadata?.generation }, now);
      next.sort((a, b) => a.type.localeCompare(b.type));
      if (next.some((c) => c.type === EXPORT_CONDITIONS.Conflict && c.status === 'True'))
        this.opts.metrics?.exportConflicts.add(conflictKey);
      else this.opts.metrics?.exportConflicts.delete(conflictKey);
      if (sameJson(sortByType(previous), next)) continue;
      try {
        await this.patchStatus(remote, SERVICEEXPORT_PLURAL, serviceExport, { conditions: next });
      } catch (err) {
        this.opts.log.warn('ServiceExport status not written', {
          cluster: remote.key,
          serviceExport: `${namespace}/${name}`,
          error: errorText(err),
        });
        throw err;
      }
    }
  }

  /**
   * status.clusters and SourcesReachable, through the status subresource (the spec's apply leaves
   * status alone), only when they differ from what the object has.
   */
  private async writeImportStatus(
    remote: RemoteCluster,
    current: ServiceImportObject | undefined,
    desired: ImportDesired,
  ): Promise<boolean> {
    if (!current) return false;
    const status = serviceImportStatus(desired, current.status, current.metadata?.generation, new Date());
    if (!status) return false;
    await this.patchStatus(remote, SERVICEIMPORT_PLURAL, current, status);
    return true;
  }

  /**
   * Merge patch of an MCS object's status subresource: each list in it is complete, so replacing
   * it whole is right. The resourceVersion makes a status written over an object replaced or
   * changed meanwhile fail (and the reconcile retry).
   */
  private patchStatus(
    remote: RemoteCluster,
    plural: string,
    object: KubernetesObject,
    status: object,
  ): Promise<unknown> {
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

function refOf(apiVersion: string, kind: string, o: KubernetesObject) {
  return {
    apiVersion,
    kind,
    namespace: o.metadata?.namespace ?? '',
    name: o.metadata?.name ?? '',
    uid: o.metadata?.uid,
  };
}

function sortByType(conditions: Condition[]): Condition[] {
  return [...conditions].sort((a, b) => a.type.localeCompare(b.type));
}
