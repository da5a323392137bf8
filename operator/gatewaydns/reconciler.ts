// Reconciles one GatewayDNS, in the shape of Cluster API's own reconcilers: a
// short reconcile() fetches, defers the one status patch, and hands off to
// reconcileGone (clean up), reconcileDelete (withdraw, drop the finalizer) or
// reconcileNormal, whose steps read alone: admit (validate, grants) → observe
// (the selected clusters' facts) → names (claims-registry.ts decides) → plan
// (plan.ts, pure) → apply (record sets; the mirror beside them) → status
// (status.ts, pure). What it remembers of a GatewayDNS is let go of by
// forget(). It reads the world every time, so it is idempotent and survives
// restarts.
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  GATEWAYDNS_FINALIZER,
  WORKLOAD_NAMESPACES_ANNOTATION,
  recordSetName,
  type GatewayDNS,
  type GatewayDNSStatus,
} from '../../api/index.js';
import { frozenOrProvisioning, type Frozen } from '../manager/clusters/lifecycle.js';
import type { Manager } from '../manager/manager.js';
import type { WatchedResource } from '../manager/runtime/informer.js';
import { MirrorReconciler, type MirrorReconcileResult } from './apply/mirror/reconciler.js';
import { withMirrorStatus, withPreviousMirrorStatus } from './apply/mirror/status.js';
import { REASONS } from '../model/conditions.js';
import type { ClusterFacts } from '../model/facts.js';
import { matchesSelector } from '../model/selector.js';
import type { EffectiveSpec } from '../model/validate.js';
import type { Logger } from '../manager/runtime/log.js';
import type { GatewayDnsMetrics } from './status/metrics.js';
import {
  keyOfObject,
  objectKey,
  objectKeyId,
  parseObjectKeyId,
  type ObjectKey,
} from '../manager/runtime/workqueue.js';
import { ClaimsRegistry, validatedSpec, type NamesDecision } from './claims/registry.js';
import type { Delegations } from './claims/hostnames.js';
import { checkGrant, namespacesNamed } from './claims/namespace-grants.js';
import { GatewayDnsPatcher } from './status/patcher.js';
import { planRecordSets, type RecordSetPlan } from './plan/plan.js';
import { reportHealth, reportWrites } from './status/report.js';
import { SourceReader } from './sources/reader.js';
import { invalidStatus, pendingStatus, statusFor } from './status/status.js';
import { healthViewOf, type VantageReports } from './status/health-view.js';
import { withHealthStatus } from './status/health-status.js';
import { readProbeReports } from './sources/probe-reports.js';
import { RecordSetWriter, type SyncResult } from './apply/record-sets.js';
import { watchesNamedBy } from './watches.js';
import { withDeferredStatus } from '../manager/runtime/deferred-status.js';

/**
 * What the reconciler uses of the manager: the management cluster's client and cache, the workload
 * clusters, the one writer and register of watch holds, Events, logs and shards (as a
 * controller-runtime reconciler gets its client and cache from the manager).
 */
export type ManagerParts = Pick<
  Manager,
  | 'management'
  | 'cache'
  | 'clusters'
  | 'clustersOf'
  | 'writer'
  | 'watches'
  | 'events'
  | 'log'
  | 'recordsNamespace'
  | 'share'
>;

export interface ReconcilerOptions {
  mgr: ManagerParts;
  /** The GatewayDNS objects, from the manager's cache. */
  gatewayDns: Pick<WatchedResource<GatewayDNS & KubernetesObject>, 'get' | 'list'>;
  /** The zone of the generated names (--domain-suffix). */
  domainSuffix: string;
  /** Further zones the dns-servers serve (--zone): custom and route host names may be in them. */
  otherZones?: readonly string[];
  /** The DNSZones in force and the namespaces' labels: who may use a custom name (ADR 0213). */
  delegations?: () => Delegations;
  metrics: GatewayDnsMetrics;
  /** Reconcile these GatewayDNS again: a custom host name they ask for was taken or freed. */
  requeue: (keys: ObjectKey[]) => void;
  firstSyncTimeoutMs?: number;
  requestTimeoutMs?: number;
  /**
   * After a start, how long a GatewayDNS asking for custom host names waits for every older one's
   * claims to be read before it writes without them (one that keeps failing must not hold it forever).
   */
  startupClaimsGraceMs?: number;
}

export interface ReconcileResult {
  written: number;
  /** Reconcile it again at once (controller-runtime's Result{Requeue: true}). */
  requeue?: boolean;
}

/** One reconcile of one GatewayDNS: what it works on, and the status it arrives at (patched once, at the end). */
interface Scope {
  gw: GatewayDNS;
  targets: string[];
  log: Logger;
  /** The status to patch when the reconcile ends, whichever way; undefined: leave it as it is. */
  status?: GatewayDNSStatus;
}

/** What reconcileNormal's observe step found. */
interface Observation {
  selected: string[];
  /** Clusters left as they are (paused, being deleted, not provisioned), and why. */
  frozen: Map<string, Frozen>;
  facts: ClusterFacts[];
  /** Each Cluster's labels: its failover tier and weight. */
  clusterLabels: ReadonlyMap<string, Record<string, string> | undefined>;
  /** The dns-servers' probe reports, when the traffic policy has a health check. */
  probeReports: Promise<VantageReports[] | undefined>;
}

/** The claims' decision once nothing holds the GatewayDNS back. */
type DecidedNames = Extract<NamesDecision, { held: false }>;

export class GatewayDnsReconciler {
  private readonly sources: SourceReader;
  private readonly claims: ClaimsRegistry;
  private readonly recordSets: RecordSetWriter;
  private readonly patcher: GatewayDnsPatcher;
  /** spec.mirror: Services and EndpointSlices in the workload clusters (operator/mirror). */
  private readonly mirrors: MirrorReconciler;
  private readonly firstSyncTimeoutMs: number;
  /** Where status/report.ts sends Events, counts and log lines. */
  private readonly reporting: Parameters<typeof reportWrites>[2];

  constructor(private readonly opts: ReconcilerOptions) {
    const firstSyncTimeoutMs = opts.firstSyncTimeoutMs ?? 5_000;
    this.firstSyncTimeoutMs = firstSyncTimeoutMs;
    const requestTimeoutMs = opts.requestTimeoutMs ?? 10_000;
    const { mgr } = opts;
    this.reporting = { events: mgr.events, metrics: opts.metrics, log: mgr.log };
    // Whether this replica serves the management namespace now (ADR 0207). Checked again right
    // before each write to the management cluster, so a shard lost mid-reconcile stops it.
    const serves = (namespace: string) => mgr.share.owns(namespace);
    this.sources = new SourceReader({ clusters: mgr.clusters, firstSyncTimeoutMs });
    this.claims = new ClaimsRegistry({
      domainSuffix: opts.domainSuffix,
      otherZones: opts.otherZones,
      delegations: opts.delegations,
      listGatewayDns: (namespace) => opts.gatewayDns.list(namespace),
      getGatewayDns: (namespace, name) => opts.gatewayDns.get(name, namespace),
      selectedClusters: (namespace, selector) => this.selectedClusters(namespace, selector),
      serves,
      requeue: (keys) => opts.requeue(keys.map(parseObjectKeyId)),
      startupGraceMs: opts.startupClaimsGraceMs,
    });
    this.patcher = new GatewayDnsPatcher({
      management: mgr.management,
      requestTimeoutMs,
      serves,
    });
    this.recordSets = new RecordSetWriter({
      clusters: mgr.clusters,
      writer: mgr.writer,
      recordsNamespace: mgr.recordsNamespace,
      firstSyncTimeoutMs,
      requestTimeoutMs,
    });
    this.mirrors = new MirrorReconciler({
      clusters: mgr.clusters,
      writer: mgr.writer,
      firstSyncTimeoutMs,
      requestTimeoutMs,
    });
  }

  /**
   * The Reconcile of Cluster API's own controllers: fetch, defer the status patch, hand off. Gone
   * from the informer: clean up (reconcileGone); being deleted: withdraw and let go
   * (reconcileDelete); otherwise the steps of reconcileNormal. Whichever way it ends (done, held,
   * requeued, failed), the status it arrived at is patched once, and only where it differs.
   */
  async reconcile(key: ObjectKey): Promise<ReconcileResult> {
    const log = this.opts.mgr.log.with({ gatewaydns: objectKeyId(key) });
    const gw = this.opts.gatewayDns.get(key.name, key.namespace);
    const targets = this.targetClusters(key.namespace);
    if (!gw) return this.reconcileGone(key, targets, log);
    const scope: Scope = { gw, targets, log };
    return withDeferredStatus(
      () => (gw.metadata.deletionTimestamp ? this.reconcileDelete(scope) : this.reconcileNormal(scope)),
      async () => {
        if (!scope.status) return;
        this.opts.metrics.gatewayDnsConditions.set(
          objectKeyId(key),
          (scope.status.conditions ?? []).map((c) => ({ type: c.type, status: c.status })),
        );
        await this.patcher.patchStatus(gw, scope.status);
      },
      log,
    );
  }

  /**
   * Another replica serves it now: everything remembered of it goes, nothing is written or
   * withdrawn (its record sets are the other replica's to keep).
   */
  release(key: ObjectKey): void {
    this.forget(key);
  }

  /** Everything this process remembers of one GatewayDNS, let go of at once. */
  private forget(key: ObjectKey): void {
    const id = objectKeyId(key);
    this.sources.forget(id);
    this.opts.mgr.watches.drop(id);
    this.claims.forget(id);
    this.mirrors.forget(id);
    this.patcher.forget(id);
    this.opts.metrics.forget(id);
  }

  /** Normally the finalizer has withdrawn everything; this catches record sets left behind by other means. */
  private async reconcileGone(key: ObjectKey, targets: string[], log: Logger): Promise<ReconcileResult> {
    this.forget(key);
    return this.withdraw(key, targets, log);
  }

  private async reconcileDelete({ gw, targets, log }: Scope): Promise<ReconcileResult> {
    const key = keyOfObject(gw);
    const id = objectKeyId(key);
    if (!gw.metadata.finalizers?.includes(GATEWAYDNS_FINALIZER)) return { written: 0 };
    // Its names are free from now: the others asking for them take them over.
    this.claims.drop(id);
    const summary = await this.withdraw(key, targets, log);
    const spec = specOrUndefined(gw);
    // Held while the mirrors are withdrawn (after a restart nothing is held yet); dropped with the finalizer.
    this.opts.mgr.watches.hold(
      id,
      watchesNamedBy({
        namespace: key.namespace,
        spec: undefined,
        selected: [],
        targets,
        mirrorNamespaces: this.mirrors.namespacesInUse(gw, spec),
      }),
    );
    const mirrorsLeft = (await this.mirrors.withdraw(gw, spec, targets)).filter(
      (o) => o.state === 'Unreachable' || o.state === 'Failed',
    );
    if (mirrorsLeft.length)
      throw new Error(
        `gatewaydns ${id}: mirror not withdrawn from ${mirrorsLeft.map((o) => `${o.cluster} (${o.message})`).join(', ')}`,
      );
    await this.patcher.patchFinalizers(
      gw,
      (gw.metadata.finalizers ?? []).filter((f) => f !== GATEWAYDNS_FINALIZER),
    );
    this.forget(key);
    this.opts.mgr.events.normal(
      gw,
      'Withdrawn',
      `record sets withdrawn from ${targets.length} workload cluster(s)`,
    );
    return summary;
  }

  /**
   * The phases, each readable alone: admit → observe (the mirror starts from the facts) → names
   * (claims) → plan (pure) → apply (record sets beside the mirror) → status.
   */
  private async reconcileNormal(scope: Scope): Promise<ReconcileResult> {
    const { gw } = scope;
    if (!gw.metadata.finalizers?.includes(GATEWAYDNS_FINALIZER))
      await this.patcher.patchFinalizers(gw, [...(gw.metadata.finalizers ?? []), GATEWAYDNS_FINALIZER]);
    const now = new Date();
    const admitted = this.admit(gw.metadata.namespace ?? '', gw.spec);
    if ('refusal' in admitted) return this.reconcileRefused(scope, admitted.refusal, now);
    const spec = admitted.spec;
    // As kubebuilder's scaffolded reconcilers do: a fresh object's conditions are set to Unknown
    // before the work, in a pass of its own, so that a reader sees "seen, not done yet" instead of
    // no status for as long as the clusters take to answer (seconds when one is slow). Only a fresh
    // object: after a spec change, status.observedGeneration lagging behind metadata.generation
    // already says the new spec is in progress (as kstatus reads it), and flipping Ready to Unknown
    // on every edit would report a GatewayDNS that keeps serving as not ready.
    if (this.patcher.isFresh(gw)) {
      scope.status = pendingStatus(gw.metadata.generation, now);
      return { written: 0, requeue: true };
    }
    const observed = await this.observe(scope, spec, now);
    const mirrorWork = this.startMirror(scope, spec, observed);
    const names = this.claims.decide(gw, spec, observed.selected, observed.facts, scope.log);
    if (names.held) {
      // Nothing is written while it waits: neither record sets nor a status that would say so.
      await mirrorWork;
      return { written: 0 };
    }
    const plan = this.plan(scope, spec, observed, names);
    const [applied, mirrored] = await Promise.allSettled([
      this.applyRecordSets(scope, observed, plan),
      mirrorWork,
    ]);
    if (applied.status === 'rejected') throw applied.reason;
    reportWrites(gw, applied.value, this.reporting);
    scope.status = await this.statusOf(scope, spec, observed, names, plan, applied.value, mirrored);
    return this.resultOf(gw, applied.value, mirrored);
  }

  /**
   * The mirror needs only the facts: started before the record sets are planned (CPU-bound for a
   * large Service), so that its writes are on their way meanwhile; awaited beside the record-set
   * writes. A frozen source is, to the mirror, one whose last known endpoints stay; a frozen
   * consumer gets no write.
   */
  private startMirror(
    scope: Scope,
    spec: EffectiveSpec,
    observed: Observation,
  ): Promise<MirrorReconcileResult> {
    const work = this.mirrors.reconcile({
      gw: scope.gw,
      spec,
      selected: observed.selected,
      targets: scope.targets.filter((c) => !observed.frozen.has(c)),
      facts: observed.facts.filter((f) => !observed.frozen.has(f.cluster)),
    });
    work.catch(() => undefined); // handled where awaited; this only keeps an early throw from leaving it unhandled
    return work;
  }

  /** Plan (pure): the record sets each receiving cluster gets. */
  private plan(scope: Scope, spec: EffectiveSpec, observed: Observation, names: DecidedNames): RecordSetPlan {
    const { gw, targets } = scope;
    return planRecordSets({
      namespace: gw.metadata.namespace ?? '',
      name: gw.metadata.name,
      spec,
      domainSuffix: this.opts.domainSuffix,
      recordsNamespace: this.opts.mgr.recordsNamespace,
      facts: observed.facts,
      conflict: names.conflict,
      hostnames: names.hostnames,
      receivingClusters: targets.filter((c) => !observed.frozen.has(c)),
      clusterLabels: observed.clusterLabels,
    });
  }

  /** Status (pure functions of what the reconcile found and did): the record sets', health's and the mirror's parts. */
  private async statusOf(
    scope: Scope,
    spec: EffectiveSpec,
    observed: Observation,
    names: DecidedNames,
    plan: RecordSetPlan,
    outcomes: SyncResult[],
    mirrored: PromiseSettledResult<MirrorReconcileResult>,
  ): Promise<GatewayDNSStatus> {
    const { gw } = scope;
    const health = healthViewOf({
      namespace: gw.metadata.namespace ?? '',
      spec,
      facts: observed.facts,
      clusterLabels: observed.clusterLabels,
      vantages: (await observed.probeReports) ?? [],
    });
    const status = statusFor({
      generation: gw.metadata.generation,
      previous: gw.status,
      facts: observed.facts,
      conflict: names.conflict,
      targets: outcomes,
      // Not the reconcile's start: a Ready that flips from Pending flips when the work is done.
      now: new Date(),
      omitted: plan.omitted,
      hostnames: names.hostnames,
    });
    const healthStatus = withHealthStatus(
      status,
      health,
      spec.trafficPolicy?.whenNoneHealthy,
      gw.metadata.generation,
      new Date(),
    );
    reportHealth(gw, healthStatus, health, this.reporting);
    // A mirror step that failed says nothing new of the mirror: its part of the status stays.
    return mirrored.status === 'fulfilled'
      ? withMirrorStatus(healthStatus, gw.status, mirrored.value.result, gw.metadata.generation, new Date())
      : withPreviousMirrorStatus(healthStatus, gw.status);
  }

  /** Done, or an error to retry with backoff (after the status says what went wrong). */
  private resultOf(
    gw: GatewayDNS,
    outcomes: SyncResult[],
    mirrored: PromiseSettledResult<MirrorReconcileResult>,
  ): ReconcileResult {
    const id = objectKey(gw);
    const failed = outcomes.filter((o) => o.result === 'failed');
    if (failed.length)
      throw new Error(
        `gatewaydns ${id}: record set not written to ${failed.map((f) => `${f.cluster} (${f.error})`).join(', ')}`,
      );
    if (mirrored.status === 'rejected') throw mirrored.reason;
    if (mirrored.value.retry) throw new Error(`gatewaydns ${id}: ${mirrored.value.retry}`);
    return { written: outcomes.filter((o) => o.result === 'written').length + mirrored.value.writes };
  }

  /**
   * Invalid, or naming a namespace not granted: terminal until the object (or its namespace's grant)
   * changes. Nothing is read or written, earlier record sets stay as they were.
   */
  private reconcileRefused(
    scope: Scope,
    refusal: { reason: typeof REASONS.Invalid | typeof REASONS.NamespaceNotAllowed; message: string },
    now: Date,
  ): ReconcileResult {
    const { gw, log } = scope;
    const id = objectKey(gw);
    log.warn(
      refusal.reason === REASONS.Invalid ? 'invalid GatewayDNS' : 'GatewayDNS names a namespace not granted',
      { error: refusal.message },
    );
    // Nothing is read or written for it until it is fixed, so it names no watch: as a deleted
    // one, it lets go of its watches (the last known addresses stay, as its record sets do).
    this.opts.mgr.watches.drop(id);
    // As spec.hostnames of an invalid object count for nothing, neither do its annotations.
    this.claims.drop(id);
    this.opts.mgr.events.warning(gw, refusal.reason, refusal.message);
    scope.status = invalidStatus(gw.metadata.generation, gw.status, refusal.message, now, refusal.reason);
    return { written: 0 };
  }

  /**
   * Observe: which clusters are selected and frozen, what each says of the Service, their labels
   * (tiers, weights), and, read beside the rest of the reconcile, the dns-servers' probe reports
   * (only what people are shown).
   */
  private async observe(scope: Scope, spec: EffectiveSpec, now: Date): Promise<Observation> {
    const { gw, targets } = scope;
    const namespace = gw.metadata.namespace ?? '';
    const selected = this.selectedClusters(namespace, spec.clusterSelector);
    // Taken before anything reads: what this GatewayDNS no longer names stops now.
    this.opts.mgr.watches.hold(
      `${namespace}/${gw.metadata.name}`,
      watchesNamedBy({
        namespace,
        spec,
        selected,
        targets,
        mirrorNamespaces: this.mirrors.namespacesInUse(gw, spec),
      }),
    );
    // Paused, being deleted or not provisioned (Cluster API contract): not read, not written into, kept as published.
    const frozen = this.frozenClusters(namespace);
    const facts = await this.sources.factsFor(gw, spec, selected, now, frozen);
    const clusterLabels = new Map(
      this.opts.mgr.clustersOf(namespace).map((c) => [c.metadata.name, c.metadata.labels]),
    );
    const probeReports = spec.trafficPolicy?.healthCheck
      ? readProbeReports(
          this.opts.mgr.clusters,
          namespace,
          this.opts.mgr.recordsNamespace,
          targets,
          this.firstSyncTimeoutMs,
        )
      : Promise.resolve(undefined);
    probeReports.catch(() => undefined); // awaited in the status phase; this only keeps an early throw from leaving it unhandled
    return { selected, frozen, facts, clusterLabels, probeReports };
  }

  /** Apply: each receiving cluster's record sets, compared and written where they differ. */
  private applyRecordSets(scope: Scope, observed: Observation, plan: RecordSetPlan): Promise<SyncResult[]> {
    const { gw, targets } = scope;
    const namespace = gw.metadata.namespace ?? '';
    const owner = { namespace, name: gw.metadata.name };
    // A cluster unreachable since before this process started is known only by the addresses in
    // status; its record sets, where they exist, still hold its per-pod names and SRV records.
    // A frozen cluster's sets are the last word in every receiving cluster, as they were published.
    const keep = new Set(
      observed.facts
        .filter((f) => f.recoveredFromStatus || observed.frozen.has(f.cluster))
        .map((f) => recordSetName(namespace, gw.metadata.name, f.cluster)),
    );
    return Promise.all(
      targets.map((c) => {
        const sets = plan.setsByCluster.get(c);
        return sets === undefined
          ? Promise.resolve<SyncResult>({ cluster: c, result: 'skipped', writtenSets: [], deletedSets: [] })
          : this.recordSets.sync(namespace, c, owner, sets, keep);
      }),
    );
  }

  /**
   * Every Cluster of the namespace, being deleted or paused too (and a paused one that has just
   * gone, as clusterctl move deletes it: the controller keeps it a while): each may run a
   * dns-server, and a frozen one keeps what it has.
   */
  private targetClusters(namespace: string): string[] {
    return this.opts.mgr
      .clustersOf(namespace)
      .map((c) => c.metadata.name)
      .sort();
  }

  /** Selected Clusters, frozen ones included: their names stay held and their records as published. */
  private selectedClusters(namespace: string, selector: Parameters<typeof matchesSelector>[0]): string[] {
    return this.opts.mgr
      .clustersOf(namespace)
      .filter((c) => matchesSelector(selector, c.metadata.labels))
      .map((c) => c.metadata.name)
      .sort();
  }

  /** The Clusters of the namespace the operator must leave alone (paused, deleting, provisioning), and why. */
  private frozenClusters(namespace: string): Map<string, Frozen> {
    const frozen = new Map<string, Frozen>();
    for (const c of this.opts.mgr.clustersOf(namespace)) {
      const why = frozenOrProvisioning(c);
      if (why) frozen.set(c.metadata.name, why);
    }
    return frozen;
  }

  private async withdraw(
    { namespace, name }: ObjectKey,
    targets: string[],
    log: Logger,
  ): Promise<ReconcileResult> {
    const outcomes = await Promise.all(
      targets.map((c) => this.recordSets.sync(namespace, c, { namespace, name }, [])),
    );
    for (const o of outcomes)
      for (const set of o.deletedSets) {
        this.opts.metrics.recordSetsDeleted++;
        log.info('record set withdrawn', { cluster: `${namespace}/${o.cluster}`, recordset: set });
      }
    const failed = outcomes.filter((o) => o.result === 'failed');
    if (failed.length)
      throw new Error(
        `gatewaydns ${namespace}/${name}: could not withdraw record set from ${failed.map((f) => `${f.cluster} (${f.error})`).join(', ')}`,
      );
    return { written: outcomes.filter((o) => o.result === 'written').length };
  }

  /**
   * The spec with its defaults, if it is valid and names only workload namespaces its management
   * namespace is granted (namespace-grants.ts); else why not, with the condition reason.
   */
  private admit(
    namespace: string,
    raw: unknown,
  ):
    | { spec: EffectiveSpec }
    | { refusal: { reason: typeof REASONS.Invalid | typeof REASONS.NamespaceNotAllowed; message: string } } {
    const validation = validatedSpec(raw);
    if (!validation.valid) return { refusal: { reason: REASONS.Invalid, message: validation.message } };
    const grant = checkGrant(
      namespace,
      this.opts.mgr.cache.namespaces.get(namespace)?.metadata?.annotations?.[WORKLOAD_NAMESPACES_ANNOTATION],
      namespacesNamed(validation.spec),
      this.opts.mgr.recordsNamespace,
    );
    if (!grant.allowed) return { refusal: { reason: REASONS.NamespaceNotAllowed, message: grant.message } };
    return { spec: validation.spec };
  }
}

function specOrUndefined(gw: GatewayDNS): EffectiveSpec | undefined {
  const v = validatedSpec(gw.spec);
  return v.valid ? v.spec : undefined;
}
