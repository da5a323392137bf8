// Reconciles one GatewayDNS, in the shape of Cluster API's own reconcilers: a
// short reconcile() that fetches and hands off to reconcileGone (clean up),
// reconcileDelete (withdraw, drop the finalizer) or reconcileNormal, whose
// steps are functions of their own: admit (validate, grants) → observe (the
// selected clusters' facts) → desire (names, claims, record sets per
// receiving cluster) → apply (record sets; the mirror beside them) → one
// status. What it remembers of a GatewayDNS is let go of by forget(). It
// reads the world every time, so it is idempotent and survives restarts.
import {
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import type { ChangeType } from '../runtime/informer.js';
import {
  CONTROLLER_NAME,
  GATEWAYDNS_FINALIZER,
  GATEWAYDNS_PLURAL,
  GROUP,
  VERSION,
  recordSetName,
  type GatewayDNS,
  type GatewayDNSStatus,
} from '../../api/index.js';
import type { ClusterCache } from '../clusters/cache.js';
import { OwnedObjectWriter } from '../clusters/owned-writer.js';
import { sameJson, withTimeout } from '../runtime/equal.js';
import type { EventRecorder } from '../runtime/events.js';
import type { Logger } from '../runtime/log.js';
import type { Metrics } from '../runtime/metrics.js';
import { claimedDomains, conflictsFor, recordSetsOf, shardViews, type Claim } from './desired.js';
import { fitRecordSets, type Omission } from './limits.js';
import {
  claimedNames,
  customHostnames,
  olderThan,
  type AnnotatedHostname,
  type HostnameClaim,
} from './hostnames.js';
import { HostnameClaims, claimantsOf } from './claims.js';
import { READY, REASONS } from '../model/conditions.js';
import { checkGrant, namespacesNamed } from './namespace-grants.js';
import { SourceReader } from './sources.js';
import type { ClusterFacts } from '../model/facts.js';
import { WorkloadWatches, watchesNamedBy } from './watches.js';
import { invalidStatus, pendingStatus, statusFor } from './status.js';
import { RecordSetWriter, desiredRecordSet, type DesiredRecordSet, type SyncResult } from './targets.js';
import { validateGatewayDnsSpec, type EffectiveSpec } from '../model/validate.js';
import { matchesSelector } from '../model/selector.js';
import { heldBack, type ClusterObject, type Frozen } from '../clusters/lifecycle.js';
import { MirrorReconciler } from '../mirror/reconciler.js';
import { withMirrorStatus } from '../mirror/status.js';

export interface ReconcilerOptions {
  management: KubeConfig;
  clusters: ClusterCache;
  /** Cached reads of the management cluster (informers). */
  getGatewayDns: (namespace: string, name: string) => GatewayDNS | undefined;
  listGatewayDns: (namespace: string) => readonly GatewayDNS[];
  listClusters: (namespace: string) => readonly ClusterObject[];
  /** The workload-namespace grant annotation of a management namespace (undefined: none set). */
  workloadNamespacesGrant: (namespace: string) => string | undefined;
  domainSuffix: string;
  recordsNamespace: string;
  events: EventRecorder;
  metrics: Metrics;
  log: Logger;
  firstSyncTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** Reconcile these GatewayDNS again: a custom host name they ask for was taken or freed. */
  requeue?: (keys: string[]) => void;
  /**
   * After a start, how long a GatewayDNS asking for custom host names waits for every older one's
   * claims to be read before it writes without them (one that keeps failing must not hold it forever).
   */
  startupClaimsGraceMs?: number;
  /** The operator's one writer of owned objects (shared with Multi-Cluster Services); one of its own when unset. */
  writer?: OwnedObjectWriter;
  /** The operator's one register of workload watch holds (shared with Multi-Cluster Services); one of its own when unset. */
  watches?: WorkloadWatches;
  /**
   * Whether this replica serves the management namespace now (ADR 0207); all when unset. Checked
   * again right before each write to the management cluster, so a shard lost mid-reconcile stops it.
   */
  serves?: (namespace: string) => boolean;
}

export interface ReconcileSummary {
  written: number;
}

/** What reconcileNormal's observe step found. */
interface Observation {
  selected: string[];
  /** Clusters left as they are (paused, being deleted, not provisioned), and why. */
  frozen: Map<string, Frozen>;
  facts: ClusterFacts[];
}

/** What its desire step computed. */
interface Desired {
  conflict: ReturnType<typeof conflictsFor>;
  hostnames: ReturnType<typeof customHostnames>;
  /** What the record sets left out to stay within DNS and etcd limits (the shared view). */
  omitted: Omission[];
  /** The record sets a receiving cluster gets. */
  setsFor: (receivingCluster: string) => DesiredRecordSet[];
}

export class GatewayDnsReconciler {
  private readonly custom: CustomObjectsApi;
  private readonly sources: SourceReader;
  /** The Service and EndpointSlice watches each GatewayDNS holds in the workload clusters. */
  private readonly watches: WorkloadWatches;
  /** The custom host names each GatewayDNS claims, annotations included, as its last reconcile read them. */
  private readonly claims = new HostnameClaims();
  private readonly writer: RecordSetWriter;
  private readonly owned: OwnedObjectWriter;
  /** spec.mirror: Services and EndpointSlices in the workload clusters (operator/mirror). */
  private readonly mirrors: MirrorReconciler;
  private readonly requestTimeoutMs: number;
  /**
   * The UID per GatewayDNS key whose status this process has written: the
   * informer's copy may not show that write yet, and a second reconcile must
   * not take such an object for a fresh one and set it back to Pending.
   */
  private readonly statusWritten = new Map<string, string | undefined>();
  /** GatewayDNS whose writes wait for older ones' claims to be read (after a start), and since when. */
  private readonly heldForClaims = new Set<string>();
  private readonly startedAt = Date.now();
  private claimsGraceTimer?: NodeJS.Timeout;

  constructor(private readonly opts: ReconcilerOptions) {
    this.custom = opts.management.makeApiClient(CustomObjectsApi);
    const firstSyncTimeoutMs = opts.firstSyncTimeoutMs ?? 5_000;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 10_000;
    this.sources = new SourceReader({ clusters: opts.clusters, firstSyncTimeoutMs });
    this.watches = opts.watches ?? new WorkloadWatches({ clusters: opts.clusters, log: opts.log });
    // One writer for every object the operator owns in workload clusters: one memory of its own writes.
    this.owned =
      opts.writer ??
      new OwnedObjectWriter({
        fieldManager: CONTROLLER_NAME,
        requestTimeoutMs: this.requestTimeoutMs,
      });
    this.writer = new RecordSetWriter({
      clusters: opts.clusters,
      writer: this.owned,
      recordsNamespace: opts.recordsNamespace,
      firstSyncTimeoutMs,
      requestTimeoutMs: this.requestTimeoutMs,
    });
    this.mirrors = new MirrorReconciler({
      clusters: opts.clusters,
      writer: this.owned,
      firstSyncTimeoutMs,
      requestTimeoutMs: this.requestTimeoutMs,
    });
  }

  /**
   * The Reconcile of Cluster API's own controllers: fetch, then hand off. Gone from the informer:
   * clean up (reconcileGone); being deleted: withdraw and let go (reconcileDelete); otherwise the
   * steps of reconcileNormal: observe, desire, apply, one status.
   */
  async reconcile(key: string): Promise<ReconcileSummary> {
    const [namespace = '', name = ''] = key.split('/');
    const log = this.opts.log.with({ gatewaydns: key });
    const gw = this.opts.getGatewayDns(namespace, name);
    const targets = this.targetClusters(namespace);
    if (!gw) return this.reconcileGone(key, targets, log);
    if (gw.metadata.deletionTimestamp) return this.reconcileDelete(gw, targets, log);
    return this.reconcileNormal(gw, targets, log);
  }

  /**
   * Another replica serves it now: everything remembered of it goes, nothing is written or
   * withdrawn (its record sets are the other replica's to keep).
   */
  release(key: string): void {
    this.forget(key);
  }

  /** Everything this process remembers of one GatewayDNS, let go of at once. */
  private forget(key: string): void {
    this.sources.forget(key);
    this.watches.drop(key);
    this.claimsChanged(key, this.claims.forget(key));
    this.mirrors.forget(key);
    this.statusWritten.delete(key);
    this.heldForClaims.delete(key);
  }

  /** Normally the finalizer has withdrawn everything; this catches record sets left behind by other means. */
  private async reconcileGone(key: string, targets: string[], log: Logger): Promise<ReconcileSummary> {
    const [namespace = '', name = ''] = key.split('/');
    this.forget(key);
    return this.withdraw(namespace, name, targets, log);
  }

  private async reconcileDelete(gw: GatewayDNS, targets: string[], log: Logger): Promise<ReconcileSummary> {
    const namespace = gw.metadata.namespace ?? '';
    const key = `${namespace}/${gw.metadata.name}`;
    if (!gw.metadata.finalizers?.includes(GATEWAYDNS_FINALIZER)) return { written: 0 };
    // Its names are free from now: the others asking for them take them over.
    this.claimsChanged(key, this.claims.drop(key));
    const summary = await this.withdraw(namespace, gw.metadata.name, targets, log);
    const spec = specOrUndefined(gw);
    // Held while the mirrors are withdrawn (after a restart nothing is held yet); dropped with the finalizer.
    this.watches.hold(
      key,
      watchesNamedBy({
        namespace,
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
        `gatewaydns ${key}: mirror not withdrawn from ${mirrorsLeft.map((o) => `${o.cluster} (${o.message})`).join(', ')}`,
      );
    await this.setFinalizers(
      gw,
      (gw.metadata.finalizers ?? []).filter((f) => f !== GATEWAYDNS_FINALIZER),
    );
    this.forget(key);
    this.opts.events.normal(
      gw,
      'Withdrawn',
      `record sets withdrawn from ${targets.length} workload cluster(s)`,
    );
    return summary;
  }

  private async reconcileNormal(gw: GatewayDNS, targets: string[], log: Logger): Promise<ReconcileSummary> {
    const key = `${gw.metadata.namespace ?? ''}/${gw.metadata.name}`;
    if (!gw.metadata.finalizers?.includes(GATEWAYDNS_FINALIZER))
      await this.setFinalizers(gw, [...(gw.metadata.finalizers ?? []), GATEWAYDNS_FINALIZER]);
    const now = new Date();
    const admitted = this.admit(gw.metadata.namespace ?? '', gw.spec);
    if ('refusal' in admitted) return this.reconcileRefused(gw, admitted.refusal, now, log);
    const spec = admitted.spec;
    const seen = await this.markSeen(gw, now);
    // One status patch per reconcile: a fresh object's "seen" is this pass's patch, the work the next's.
    if (seen.fresh && this.opts.requeue) {
      this.opts.requeue([key]);
      return { written: 0 };
    }
    const previous = seen.status;
    const observed = await this.observe(gw, spec, targets, now);
    // The mirror needs only the facts: started before the record sets are computed (CPU-bound for a
    // large Service), so that its writes are on their way meanwhile; awaited beside the record-set writes.
    // A frozen source is, to the mirror, one whose last known endpoints stay; a frozen consumer gets no write.
    const mirrorWork = this.mirrors.reconcile({
      gw,
      spec,
      selected: observed.selected,
      targets: targets.filter((c) => !observed.frozen.has(c)),
      facts: observed.facts.filter((f) => !observed.frozen.has(f.cluster)),
    });
    mirrorWork.catch(() => undefined); // handled where awaited; this only keeps an early throw below from leaving it unhandled
    const desired = this.desire(gw, spec, observed, log);
    if (!desired) {
      await mirrorWork;
      return { written: 0 };
    }
    const [outcomes, mirror] = await Promise.all([
      this.applyRecordSets(gw, spec, targets, observed, desired),
      mirrorWork,
    ]);
    this.report(gw, outcomes, log);
    await this.writeStatus(
      gw,
      withMirrorStatus(
        statusFor({
          generation: gw.metadata.generation,
          previous,
          facts: observed.facts,
          conflict: desired.conflict,
          targets: outcomes,
          // Not `now`: a Ready that flips from Pending flips when the work is done.
          now: new Date(),
          omitted: desired.omitted,
          hostnames: desired.hostnames,
        }),
        gw.status,
        mirror.result,
        gw.metadata.generation,
        new Date(),
      ),
    );
    const failed = outcomes.filter((o) => o.result === 'failed');
    if (failed.length)
      throw new Error(
        `gatewaydns ${key}: record set not written to ${failed.map((f) => `${f.cluster} (${f.error})`).join(', ')}`,
      );
    if (mirror.retry) throw new Error(`gatewaydns ${key}: ${mirror.retry}`);
    return { written: outcomes.filter((o) => o.result === 'written').length + mirror.writes };
  }

  /**
   * Invalid, or naming a namespace not granted: terminal until the object (or its namespace's grant)
   * changes. Nothing is read or written, earlier record sets stay as they were.
   */
  private async reconcileRefused(
    gw: GatewayDNS,
    refusal: { reason: typeof REASONS.Invalid | typeof REASONS.NamespaceNotAllowed; message: string },
    now: Date,
    log: Logger,
  ): Promise<ReconcileSummary> {
    const key = `${gw.metadata.namespace ?? ''}/${gw.metadata.name}`;
    log.warn(
      refusal.reason === REASONS.Invalid ? 'invalid GatewayDNS' : 'GatewayDNS names a namespace not granted',
      {
        error: refusal.message,
      },
    );
    // Nothing is read or written for it until it is fixed, so it names no watch: as a deleted
    // one, it lets go of its watches (the last known addresses stay, as its record sets do).
    this.watches.drop(key);
    // As spec.hostnames of an invalid object count for nothing, neither do its annotations.
    this.claimsChanged(key, this.claims.drop(key));
    this.heldForClaims.delete(key);
    this.opts.events.warning(gw, refusal.reason, refusal.message);
    await this.writeStatus(
      gw,
      invalidStatus(gw.metadata.generation, gw.status, refusal.message, now, refusal.reason),
    );
    return { written: 0 };
  }

  /**
   * The status the work starts from. As kubebuilder's scaffolded reconcilers do: a fresh object's
   * conditions are set to Unknown before the work, so that a reader sees "seen, not done yet"
   * instead of no status, for as long as the clusters take to answer (seconds when one is slow).
   * Only a fresh object: after a spec change, status.observedGeneration lagging behind
   * metadata.generation already says the new spec is in progress (as kstatus reads it), and
   * flipping Ready to Unknown on every edit would report a GatewayDNS that keeps serving as not ready.
   * With a work queue (requeue), that patch is a pass of its own (reconcileNormal); without one,
   * it comes first in this pass.
   */
  private async markSeen(
    gw: GatewayDNS,
    now: Date,
  ): Promise<{ fresh: boolean; status: GatewayDNSStatus | undefined }> {
    if (!this.isFresh(gw)) return { fresh: false, status: gw.status };
    const pending = pendingStatus(gw.metadata.generation, now);
    await this.writeStatus(gw, pending);
    return { fresh: true, status: pending };
  }

  /** Observe: which clusters are selected and held back, and what each says of the Service. */
  private async observe(
    gw: GatewayDNS,
    spec: EffectiveSpec,
    targets: string[],
    now: Date,
  ): Promise<Observation> {
    const namespace = gw.metadata.namespace ?? '';
    const key = `${namespace}/${gw.metadata.name}`;
    const selected = this.selectedClusters(namespace, spec.clusterSelector);
    // Taken before anything reads: what this GatewayDNS no longer names stops now.
    this.watches.hold(
      key,
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
    return { selected, frozen, facts };
  }

  /**
   * Desire: the names this GatewayDNS may have (generated ones against the namespace's older
   * claims, custom ones against every older claim), and the record sets per receiving cluster.
   * Undefined while it is held for older claims not read yet (after a start).
   */
  private desire(
    gw: GatewayDNS,
    spec: EffectiveSpec,
    observed: Observation,
    log: Logger,
  ): Desired | undefined {
    const namespace = gw.metadata.namespace ?? '';
    const name = gw.metadata.name;
    const key = `${namespace}/${name}`;
    const { selected, facts } = observed;
    const conflict = conflictsFor(this.claimOf(gw, selected), this.otherClaims(gw));
    const claim = hostnameClaimOf(gw, spec.hostnames, annotatedClaims(spec, facts));
    this.claimsChanged(key, this.claims.set(key, claim));
    const unread = claimedNames(claim).length ? this.olderClaimsUnread(gw, claim) : [];
    if (unread.length && Date.now() - this.startedAt < this.startupClaimsGraceMs()) {
      // Right after a start: an older GatewayDNS not reconciled yet may hold one of these names
      // through its Service's annotation. Writing now could publish a name it then gives up, and
      // rewrite the set a moment later; its first reconcile releases this one (releaseHeld).
      this.holdForClaims(key, unread, log);
      return undefined;
    }
    this.heldForClaims.delete(key);
    const hostnames = customHostnames(claim, this.opts.domainSuffix, this.hostnameClaims(key));
    // One desired set per source cluster, the same for every receiving cluster, or with answer
    // localFirst computed per receiving cluster; the writer compares before it writes, so a change
    // costs one write per cluster whose shard it alters, and nothing when nothing changed.
    const views = shardViews({
      namespace,
      name,
      spec,
      suffix: this.opts.domainSuffix,
      facts,
      excludedDomains: conflict.lostDomains,
      hostnames: hostnames.served,
    });
    // Receiving clusters that see the same view share one computation (with answer all: every one).
    const byView = new Map<string, { sets: DesiredRecordSet[]; omitted: Omission[] }>();
    const setsFor = (receivingCluster?: string) => {
      const view = views.viewOf(receivingCluster);
      let desired = byView.get(view);
      if (!desired) {
        const fitted = fitRecordSets(
          recordSetsOf({ namespace, name }, views.shards(receivingCluster), this.opts.recordsNamespace),
        );
        desired = { sets: fitted.sets.map(desiredRecordSet), omitted: fitted.omitted };
        byView.set(view, desired);
      }
      return desired;
    };
    const shared = setsFor();
    return {
      conflict,
      hostnames,
      omitted: shared.omitted,
      // A set that would answer no name is not written (fitRecordSets leaves it out), and one written
      // earlier that no longer answers anything is withdrawn by the writer. With localFirst every
      // receiving cluster's sets hold the per-cluster names, so they serve exactly when the shared ones do.
      setsFor: (c) => (spec.answer === 'localFirst' && shared.sets.length ? setsFor(c).sets : shared.sets),
    };
  }

  /** Apply: each receiving cluster's record sets, compared and written where they differ. */
  private applyRecordSets(
    gw: GatewayDNS,
    spec: EffectiveSpec,
    targets: string[],
    observed: Observation,
    desired: Desired,
  ): Promise<SyncResult[]> {
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
      targets.map((c) =>
        observed.frozen.has(c)
          ? Promise.resolve<SyncResult>({ cluster: c, result: 'skipped', writtenSets: [], deletedSets: [] })
          : this.writer.sync(namespace, c, owner, desired.setsFor(c), keep),
      ),
    );
  }

  /**
   * An event of a workload-cluster object (a DNSRecordSet, a mirror Service or EndpointSlice) that
   * this reconciler's own latest write or delete caused: it needs no reconcile (see
   * OwnedObjectWriter.isOwnEcho).
   */
  isOwnEcho(cluster: string, kind: string, type: ChangeType, object: KubernetesObject): boolean {
    return this.owned.isOwnEcho(cluster, kind, type, object);
  }

  /**
   * Every Cluster of the namespace, being deleted or paused too (and a paused one that has just
   * gone, as clusterctl move deletes it: the controller keeps it a while): each may run a
   * dns-server, and a frozen one keeps what it has.
   */
  private targetClusters(namespace: string): string[] {
    return this.opts
      .listClusters(namespace)
      .map((c) => c.metadata.name)
      .sort();
  }

  /** Selected Clusters, frozen ones included: their names stay held and their records as published. */
  private selectedClusters(namespace: string, selector: Parameters<typeof matchesSelector>[0]): string[] {
    return this.opts
      .listClusters(namespace)
      .filter((c) => matchesSelector(selector, c.metadata.labels))
      .map((c) => c.metadata.name)
      .sort();
  }

  /** The Clusters of the namespace the operator must leave alone (paused, deleting, provisioning), and why. */
  private frozenClusters(namespace: string): Map<string, Frozen> {
    const frozen = new Map<string, Frozen>();
    for (const c of this.opts.listClusters(namespace)) {
      const why = heldBack(c);
      if (why) frozen.set(c.metadata.name, why);
    }
    return frozen;
  }

  private claimOf(gw: GatewayDNS, selected: string[]): Claim {
    const spec = validatedSpec(gw.spec);
    return {
      name: gw.metadata.name,
      createdAt: new Date(gw.metadata.creationTimestamp ?? 0).toISOString(),
      domains: spec.valid
        ? claimedDomains(gw.metadata.namespace ?? '', spec.spec, selected, this.opts.domainSuffix)
        : [],
    };
  }

  private otherClaims(gw: GatewayDNS): Claim[] {
    const namespace = gw.metadata.namespace ?? '';
    return this.opts
      .listGatewayDns(namespace)
      .filter((o) => o.metadata.name !== gw.metadata.name && !o.metadata.deletionTimestamp)
      .map((o) => {
        const spec = validatedSpec(o.spec);
        return this.claimOf(o, spec.valid ? this.selectedClusters(namespace, spec.spec.clusterSelector) : []);
      });
  }

  /**
   * The custom host names of every other GatewayDNS the operator sees, in any namespace (custom
   * names are not per team): spec.hostnames from the informer, annotations as their last reconcile
   * read them.
   */
  private hostnameClaims(self: string): HostnameClaim[] {
    return this.opts
      .listGatewayDns('')
      .filter((o) => `${o.metadata.namespace}/${o.metadata.name}` !== self && !o.metadata.deletionTimestamp)
      .flatMap((o) => {
        const spec = validatedSpec(o.spec);
        if (!spec.valid) return [];
        const annotated = this.claims.annotatedOf(`${o.metadata.namespace}/${o.metadata.name}`);
        return spec.spec.hostnames.length || annotated.length
          ? [hostnameClaimOf(o, spec.spec.hostnames, annotated)]
          : [];
      });
  }

  private startupClaimsGraceMs(): number {
    return this.opts.startupClaimsGraceMs ?? 30_000;
  }

  /** The valid, older GatewayDNS (any namespace) whose claims this process has not read yet. */
  private olderClaimsUnread(gw: GatewayDNS, self: HostnameClaim): string[] {
    return (
      this.opts
        .listGatewayDns('')
        // Another replica's GatewayDNS are read there: waiting for them here would wait for nothing.
        .filter(
          (o) =>
            !o.metadata.deletionTimestamp &&
            validatedSpec(o.spec).valid &&
            this.serves(o.metadata.namespace ?? ''),
        )
        .map((o) => hostnameClaimOf(o, [], []))
        .filter(
          (o) => o.gatewayDns !== self.gatewayDns && olderThan(o, self) && !this.claims.hasRead(o.gatewayDns),
        )
        .map((o) => o.gatewayDns)
    );
  }

  private holdForClaims(key: string, unread: string[], log: Logger): void {
    if (!this.heldForClaims.has(key))
      log.info('record sets held until older GatewayDNS claims are read', {
        waitingFor: unread.slice(0, 5),
        more: Math.max(0, unread.length - 5),
      });
    this.heldForClaims.add(key);
    // Whatever happens to the older ones, the grace ends: the held ones are reconciled then.
    this.claimsGraceTimer ??= setTimeout(
      () => this.opts.requeue?.([...this.heldForClaims]),
      Math.max(0, this.startedAt + this.startupClaimsGraceMs() - Date.now()) + 10,
    );
    this.claimsGraceTimer.unref();
  }

  /** A GatewayDNS's claims were just read: the held ones with nothing older left unread go ahead. */
  private releaseHeld(): void {
    if (!this.heldForClaims.size || !this.opts.requeue) return;
    const ready = [...this.heldForClaims].filter((key) => {
      const [namespace = '', name = ''] = key.split('/');
      const held = this.opts.getGatewayDns(namespace, name);
      return !held || !this.olderClaimsUnread(held, hostnameClaimOf(held, [], [])).length;
    });
    for (const key of ready) this.heldForClaims.delete(key);
    if (ready.length) this.opts.requeue(ready);
  }

  /** `key` took or let go of `names`: the others asking for any of them must look again. */
  private claimsChanged(key: string, names: string[]): void {
    this.releaseHeld();
    if (!names.length || !this.opts.requeue) return;
    const keys = claimantsOf(key, names, this.hostnameClaims(key));
    if (keys.length) this.opts.requeue(keys);
  }

  private async withdraw(
    namespace: string,
    name: string,
    targets: string[],
    log: Logger,
  ): Promise<ReconcileSummary> {
    const outcomes = await Promise.all(
      targets.map((c) => this.writer.sync(namespace, c, { namespace, name }, [])),
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
      this.opts.workloadNamespacesGrant(namespace),
      namespacesNamed(validation.spec),
      this.opts.recordsNamespace,
    );
    if (!grant.allowed) return { refusal: { reason: REASONS.NamespaceNotAllowed, message: grant.message } };
    return { spec: validation.spec };
  }

  /** Whether this object is new to the operator: no Ready condition, and no status written by us yet. */
  private isFresh(gw: GatewayDNS): boolean {
    if (gw.status?.conditions?.some((c) => c.type === READY)) return false;
    const key = `${gw.metadata.namespace ?? ''}/${gw.metadata.name}`;
    return !this.statusWritten.has(key) || this.statusWritten.get(key) !== gw.metadata.uid;
  }

  private report(gw: GatewayDNS, outcomes: SyncResult[], log: Logger): void {
    const namespace = gw.metadata.namespace ?? '';
    for (const o of outcomes) {
      const cluster = `${namespace}/${o.cluster}`;
      for (const set of o.writtenSets) {
        this.opts.metrics.recordSetsWritten++;
        log.info('record set written', { cluster, recordset: set });
      }
      for (const set of o.deletedSets) {
        this.opts.metrics.recordSetsDeleted++;
        log.info('record set withdrawn: its source cluster answers no name', { cluster, recordset: set });
      }
      // One Event per cluster and reconcile, not per set: ten source clusters would make ten.
      if (o.writtenSets.length)
        this.opts.events.normal(
          gw,
          'RecordSetWritten',
          `record set(s) ${o.writtenSets.join(', ')} written to cluster ${o.cluster}`,
        );
      if (o.deletedSets.length)
        this.opts.events.normal(
          gw,
          'RecordSetWithdrawn',
          `record set(s) ${o.deletedSets.join(', ')} withdrawn from cluster ${o.cluster}: they answer no name`,
        );
      if (o.result === 'failed') {
        log.warn('record set not written', { cluster, error: o.error });
        this.opts.events.warning(gw, 'ClusterUnreachable', `cluster ${o.cluster}: ${o.error}`);
      }
    }
  }

  private serves(namespace: string): boolean {
    return this.opts.serves?.(namespace) ?? true;
  }

  /** The fence of ADR 0207 for the management cluster: status and finalizers only while the namespace is served here. */
  private fence(gw: GatewayDNS, what: string): void {
    const namespace = gw.metadata.namespace ?? '';
    if (!this.serves(namespace))
      throw new Error(
        `${what} of gatewaydns ${namespace}/${gw.metadata.name} not written: namespace ${namespace} is not this replica's share now`,
      );
  }

  private async writeStatus(gw: GatewayDNS, status: GatewayDNSStatus): Promise<void> {
    const key = `${gw.metadata.namespace ?? ''}/${gw.metadata.name}`;
    if (sameJson(gw.status ?? {}, status)) {
      this.statusWritten.set(key, gw.metadata.uid);
      return;
    }
    this.fence(gw, 'status');
    await withTimeout(
      this.custom.patchNamespacedCustomObjectStatus(
        {
          group: GROUP,
          version: VERSION,
          namespace: gw.metadata.namespace ?? '',
          plural: GATEWAYDNS_PLURAL,
          name: gw.metadata.name,
          // Merge patch replaces lists whole: conditions and clusters are always complete here.
          body: { status },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
      this.requestTimeoutMs,
      `status of gatewaydns ${gw.metadata.namespace}/${gw.metadata.name}`,
    );
    this.statusWritten.set(key, gw.metadata.uid);
  }

  private async setFinalizers(gw: GatewayDNS, finalizers: string[]): Promise<void> {
    this.fence(gw, 'finalizers');
    await withTimeout(
      this.custom.patchNamespacedCustomObject(
        {
          group: GROUP,
          version: VERSION,
          namespace: gw.metadata.namespace ?? '',
          plural: GATEWAYDNS_PLURAL,
          name: gw.metadata.name,
          // The resourceVersion makes this fail (and retry) if someone else changed finalizers meanwhile.
          body: { metadata: { finalizers, resourceVersion: gw.metadata.resourceVersion } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
      this.requestTimeoutMs,
      `finalizers of gatewaydns ${gw.metadata.namespace}/${gw.metadata.name}`,
    );
  }
}

function specOrUndefined(gw: GatewayDNS): EffectiveSpec | undefined {
  const v = validatedSpec(gw.spec);
  return v.valid ? v.spec : undefined;
}

/**
 * Every reconcile weighs the claims of the other GatewayDNS, which means their validated specs.
 * The informer replaces an object (and so its spec) on every update, so a spec object seen before
 * is unchanged: validated once per version, as an index kept by the informer would, not once per pass.
 */
const validations = new WeakMap<object, ReturnType<typeof validateGatewayDnsSpec>>();
function validatedSpec(raw: unknown): ReturnType<typeof validateGatewayDnsSpec> {
  if (typeof raw !== 'object' || raw === null) return validateGatewayDnsSpec(raw);
  let v = validations.get(raw);
  if (!v) {
    v = validateGatewayDnsSpec(raw);
    validations.set(raw, v);
  }
  return v;
}

function hostnameClaimOf(gw: GatewayDNS, hostnames: string[], annotated: AnnotatedHostname[]): HostnameClaim {
  return {
    gatewayDns: `${gw.metadata.namespace}/${gw.metadata.name}`,
    createdAt: new Date(gw.metadata.creationTimestamp ?? 0).toISOString(),
    hostnames,
    ...(annotated.length ? { annotated } : {}),
  };
}

/** The fqdn annotation's names of each selected cluster's Service, each once, with where it was read. */
function annotatedClaims(spec: EffectiveSpec, facts: ClusterFacts[]): AnnotatedHostname[] {
  const seen = new Map<string, AnnotatedHostname>();
  for (const f of facts)
    for (const name of f.annotatedHostnames ?? [])
      if (!seen.has(name))
        seen.set(name, {
          name,
          from: `Service ${spec.serviceNamespace}/${spec.serviceName} in cluster ${f.cluster}`,
        });
  return [...seen.values()];
}
