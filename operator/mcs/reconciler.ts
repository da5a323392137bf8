// Multi-Cluster Services, agentless: one reconcile per exported Service of a
// ClusterSet ("<management namespace>|<namespace>|<name>"), in the shape of
// Cluster API's reconcilers: a scope, one deferred status write (the
// conditions of each member's ServiceExport), and reconcileNormal (some member
// exports it) or reconcileDelete (none does) as short phases. Observe reads
// every member cluster's ServiceExport, Service and EndpointSlices from the
// shared informers; plan (desired.ts) is pure; apply (import-writer.ts) writes
// the ServiceImport, the derived Service and the MCS EndpointSlices into every
// member that has the namespace, and withdraws ours elsewhere. A member that
// does not answer keeps what it had, and its exports count as last seen.
import type { KubernetesObject } from '@kubernetes/client-node';
import { SERVICEEXPORT_PLURAL, type Condition } from '../../api/index.js';
import { SERVICES, SERVICE_ENDPOINT_SLICES } from '../manager/clusters/kinds.js';
import type { OwnedObjectWriter } from '../manager/clusters/owned-writer.js';
import type { RemoteCluster } from '../manager/clusters/remote.js';
import type { WorkloadWatches } from '../manager/clusters/workload-watches.js';
import { errorText, type Logger } from '../manager/runtime/log.js';
import { sameJson } from '../manager/runtime/equal.js';
import { planForMembers, type MembersPlan } from './desired.js';
import { ExportClustersField } from './export-clusters-field.js';
import { exportClusters, exportConditions } from './export-status.js';
import { ImportWriter } from './import-writer.js';
import { parseServiceKeyId, serviceKeyId, type ServiceKey } from './keys.js';
import { SERVICE_EXPORTS } from './kinds.js';
import type { McsMetrics } from './metrics.js';
import { observeExport, type ExportObservation } from './observe.js';
import { McsStatusPatcher } from './status-patcher.js';
import { withDeferredStatus } from '../manager/runtime/deferred-status.js';

export type { ServiceKey };

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

/** One reconcile of one multi-cluster Service: what it works on, and what it arrives at. */
interface Scope {
  service: ServiceKey;
  id: string;
  members: Member[];
  summary: McsSummary;
  /** The plan whose export conditions are written when the reconcile ends, whichever way. */
  plan?: MembersPlan;
}

type ExportObject = KubernetesObject & {
  status?: { conditions?: Condition[]; clusters?: { cluster: string }[] };
};

export class McsReconciler {
  /** Per key and exporting cluster, its export as last seen: kept while the cluster does not answer. */
  private readonly lastSeen = new Map<string, Map<string, ExportObservation>>();
  private readonly status: McsStatusPatcher;
  /** Which members' ServiceExport CRD has status.clusters (KEP PR #6329). */
  private readonly clustersField: ExportClustersField;
  private readonly imports: ImportWriter;

  constructor(private readonly opts: McsReconcilerOptions) {
    this.status = new McsStatusPatcher({ requestTimeoutMs: opts.requestTimeoutMs });
    this.clustersField = new ExportClustersField({
      refreshMs: 10 * 60_000,
      requestTimeoutMs: opts.requestTimeoutMs ?? 10_000,
    });
    this.imports = new ImportWriter({
      writer: opts.writer,
      status: this.status,
      firstSyncTimeoutMs: opts.firstSyncTimeoutMs,
    });
  }

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

  /**
   * Observe, then hand off: reconcileNormal while some member exports the Service (or did, as last
   * seen), reconcileDelete once none does. Whichever way it ends, each export's conditions are
   * written once, and only where they differ.
   */
  async reconcile(service: ServiceKey): Promise<McsSummary> {
    const scope: Scope = {
      service,
      id: serviceKeyId(service),
      members: this.opts.members(service.managementNamespace),
      summary: { written: 0, failed: [] },
    };
    return withDeferredStatus(
      async () => {
        const observed = await this.observe(scope);
        return observed.length ? this.reconcileNormal(scope, observed) : this.reconcileDelete(scope);
      },
      () => this.writeExportStatus(scope),
      this.opts.log.with({ key: scope.id }),
    );
  }

  /** Plan (pure), then apply: members get the import, every other cluster of the namespace loses ours. */
  private async reconcileNormal(scope: Scope, observed: ExportObservation[]): Promise<McsSummary> {
    const { namespace, name } = scope.service;
    scope.plan = planForMembers(namespace, name, observed, scope.members);
    await this.applyEverywhere(scope, scope.plan);
    return scope.summary;
  }

  /** No member exports it: ours is withdrawn from every cluster, and what was remembered of it goes. */
  private async reconcileDelete(scope: Scope): Promise<McsSummary> {
    const { namespace, name } = scope.service;
    scope.plan = planForMembers(namespace, name, [], scope.members);
    await this.applyEverywhere(scope, scope.plan);
    this.lastSeen.delete(scope.id);
    return scope.summary;
  }

  /** Every cluster at once: the write gate bounds what is in flight, per cluster and in all. */
  private async applyEverywhere(scope: Scope, plan: MembersPlan): Promise<void> {
    const { managementNamespace, namespace, name } = scope.service;
    await Promise.all(
      this.opts.allClusters(managementNamespace).map(async (cluster) => {
        const { remote } = cluster;
        if (!remote || cluster.frozen) return;
        try {
          scope.summary.written += await this.imports.applyTo(
            remote,
            namespace,
            name,
            plan.importOf.get(cluster.name),
          );
        } catch (err) {
          scope.summary.failed.push(`${cluster.name}: ${errorText(err)}`);
        }
      }),
    );
    scope.summary.failed.sort();
  }

  /**
   * Each member's ServiceExport: its conditions as planned (export-status.ts), and the members it
   * reaches (status.clusters, where the CRD has the field), written where they differ.
   */
  private async writeExportStatus(scope: Scope): Promise<void> {
    const { namespace, name } = scope.service;
    const now = new Date();
    for (const m of scope.members) {
      const remote = m.remote;
      if (!remote || m.frozen) continue;
      const exports = remote.informer(SERVICE_EXPORTS);
      const serviceExport = exports.get(name, namespace) as ExportObject | undefined;
      const planned = scope.plan?.conditions.get(m.name);
      const conflictKey = `${remote.key}/${namespace}/${name}`;
      if (!serviceExport) this.opts.metrics?.exportConflicts.delete(conflictKey);
      if (!serviceExport || !planned || remote.unreachableReason(exports)) continue;
      const next = exportConditions(
        serviceExport.status?.conditions ?? [],
        planned,
        scope.summary.failed,
        serviceExport.metadata?.generation,
        now,
      );
      if (next.conflict) this.opts.metrics?.exportConflicts.add(conflictKey);
      else this.opts.metrics?.exportConflicts.delete(conflictKey);
      const clusters = exportClusters(scope.plan?.reaches.get(m.name));
      const withClusters =
        !sameJson(serviceExport.status?.clusters ?? [], clusters) &&
        (await this.clustersField.served(remote));
      if (!next.changed && !withClusters) continue;
      await this.status
        .patch(remote, SERVICEEXPORT_PLURAL, serviceExport, {
          conditions: next.conditions,
          ...(withClusters ? { clusters } : {}),
        })
        .catch((err: unknown) => {
          throw new Error(
            `ServiceExport ${namespace}/${name} status not written in cluster ${remote.key}: ${errorText(err)}`,
          );
        });
    }
  }

  /** The exports of every member, as their watches show them now, or as last seen when a member does not answer. */
  private async observe(scope: Scope): Promise<ExportObservation[]> {
    const { id: key, members } = scope;
    const { namespace, name } = scope.service;
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
}
