// Reconciles the ClusterProfile of one Cluster API Cluster (key
// "<namespace>/<cluster>"), in the shape of the other reconcilers: a short
// reconcile() fetches, defers the one status write, and hands off to
// reconcileNormal (the object applied, the status computed: status.ts, pure).
// There is no reconcileDelete: the profile is owned by its Cluster, and the
// garbage collector deletes it with it (ADR 0214).
import { PROFILE_CONDITIONS, type ClusterProfile, type ClusterProfileStatus } from '../../api/index.js';
import type { ClusterProvider, FleetCluster } from '../manager/clusters/provider.js';
import { clusterEventTarget, type ClusterCondition } from '../manager/clusters/lifecycle.js';
import { withDeferredStatus } from '../manager/runtime/deferred-status.js';
import type { EventRecorder } from '../manager/runtime/events.js';
import { sameJson } from '../manager/runtime/equal.js';
import type { Logger } from '../manager/runtime/log.js';
import type { Outcome } from '../manager/runtime/workqueue.js';
import { accessProviderOf, isOurs, profileObject, profileUpToDate, type ClusterRef } from './desired.js';
import type { ProfileMetrics } from './metrics.js';
import type { ClusterProfilePatcher } from './patcher.js';
import { profileStatus } from './status.js';

export interface ProfileReconcilerOptions {
  /** Cluster API's Cluster (never another inventory's cluster: with --inventory=both, a profile is no Cluster). */
  getCluster: (namespace: string, name: string) => FleetCluster | undefined;
  provider: Pick<ClusterProvider, 'notConnectableYet' | 'kubeconfig'>;
  getProfile: (namespace: string, name: string) => ClusterProfile | undefined;
  /** The ClusterSet of a management namespace (its label), if it is one. */
  clusterSet: (namespace: string) => string | undefined;
  kubernetesVersion: (
    namespace: string,
    name: string,
    topologyVersion?: string,
  ) => Promise<string | undefined>;
  clusterManager: string;
  patcher: ClusterProfilePatcher;
  metrics: ProfileMetrics;
  events: Pick<EventRecorder, 'warning'>;
  log: Logger;
  /** How often a profile is looked at again without a change (its version, Cluster API's conditions). */
  resyncMs: number;
}

interface Scope {
  cluster: FleetCluster;
  ref: ClusterRef;
  existing?: ClusterProfile;
  /** The profile as applied (its generation). */
  applied?: ClusterProfile;
  status?: ClusterProfileStatus;
  log: Logger;
}

/** The fields of a v1beta2 Cluster the profile reads besides its lifecycle. */
type ClusterWithTopology = FleetCluster & { spec?: { topology?: { version?: string } } };

export class ProfileReconciler {
  constructor(private readonly opts: ProfileReconcilerOptions) {}

  async reconcile(key: string): Promise<Outcome | void> {
    const [namespace = '', name = ''] = key.split('/');
    const log = this.opts.log.with({ cluster: key });
    const cluster = this.opts.getCluster(namespace, name);
    // Gone, or going: the garbage collector deletes its profile with it.
    if (!cluster?.metadata.uid || cluster.metadata.deletionTimestamp) return this.opts.metrics.forget(key);
    const ref: ClusterRef = { namespace, name, uid: cluster.metadata.uid };
    const existing = this.opts.getProfile(namespace, name);
    if (existing && !isOurs(existing, ref, this.opts.clusterManager))
      return this.conflict(key, cluster, existing);
    this.opts.metrics.conflicts.delete(key);
    const scope: Scope = { cluster, ref, existing, log };
    return withDeferredStatus(
      () => this.reconcileNormal(scope),
      () => this.writeStatus(scope),
      log,
    );
  }

  private async reconcileNormal(scope: Scope): Promise<Outcome> {
    const { cluster, ref, existing } = scope;
    const manager = this.opts.clusterManager;
    scope.applied =
      existing && profileUpToDate(existing, ref, manager)
        ? existing
        : await this.opts.patcher.apply(profileObject(ref, manager));
    if (!existing) scope.log.info('ClusterProfile created', { clusterManager: manager });
    const source = this.opts.provider.kubeconfig(ref.namespace, ref.name);
    const access = 'problem' in source ? { problem: source.problem } : accessProviderOf(ref, source.text);
    const notConnectableYet = this.opts.provider.notConnectableYet(ref.namespace, ref.name);
    const version = notConnectableYet
      ? undefined
      : await this.opts.kubernetesVersion(
          ref.namespace,
          ref.name,
          (cluster as ClusterWithTopology).spec?.topology?.version,
        );
    scope.status = profileStatus({
      clusterName: ref.name,
      clusterConditions: (cluster.status?.conditions ?? []) as ClusterCondition[],
      notConnectableYet,
      access,
      clusterSet: this.opts.clusterSet(ref.namespace),
      kubernetesVersion: version,
      previous: scope.applied.status,
      generation: scope.applied.metadata.generation,
      now: new Date(),
    });
    return { requeueAfterMs: this.opts.resyncMs };
  }

  private async writeStatus(scope: Scope): Promise<void> {
    const { status, ref } = scope;
    if (!status) return;
    const key = `${ref.namespace}/${ref.name}`;
    const condition = (type: string) => status.conditions?.find((c) => c.type === type)?.status === 'True';
    this.opts.metrics.profiles.set(key, {
      joined: condition(PROFILE_CONDITIONS.Joined),
      healthy: condition(PROFILE_CONDITIONS.ControlPlaneHealthy),
    });
    if (sameJson(scope.applied?.status ?? {}, status)) return;
    await this.opts.patcher.applyStatus(ref.namespace, ref.name, status);
  }

  /** Another cluster manager's profile holds the Cluster's name: left as it is, said once. */
  private conflict(key: string, cluster: FleetCluster, existing: ClusterProfile): void {
    if (this.opts.metrics.conflicts.has(key)) return;
    this.opts.metrics.conflicts.add(key);
    this.opts.metrics.profiles.delete(key);
    const message = `ClusterProfile ${key} exists and is not capi-dns's (cluster manager ${JSON.stringify(existing.spec?.clusterManager?.name ?? '')}, not owned by this Cluster): left as it is, the Cluster is not published`;
    this.opts.log.warn('ClusterProfile not published', { cluster: key, error: message });
    this.opts.events.warning(clusterEventTarget(cluster.metadata), 'ClusterProfileConflict', message);
  }
}
