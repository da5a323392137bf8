// Keeps one GatewayDNS's DNSRecordSets (one per source cluster) in a workload
// cluster exactly as desired: writes what differs, deletes what is no longer
// wanted. Compare-then-write against the watched cache, and server-side apply
// with one fixed field manager when something differs: a restart that
// computes the same records writes nothing.
import { PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import { API_VERSION, CONTROLLER_NAME, gatewayDnsLabels, type DNSRecordSet } from '../../api/index.js';
import type { ClusterCache } from '../clusters/cache.js';
import type { RemoteCluster } from '../clusters/remote.js';
import { canonical } from '../runtime/equal.js';
import type { ChangeType } from '../runtime/informer.js';
import { errorText, httpStatus } from '../runtime/log.js';
import type { TargetOutcome } from './status.js';

export const FIELD_MANAGER = CONTROLLER_NAME;

export interface RecordSetWriterOptions {
  clusters: ClusterCache;
  recordsNamespace: string;
  firstSyncTimeoutMs: number;
  requestTimeoutMs: number;
}

/** A record set to write, with its content in canonical form (computed once, compared in every cluster). */
export interface DesiredRecordSet {
  set: DNSRecordSet;
  content: string;
}

export function desiredRecordSet(set: DNSRecordSet): DesiredRecordSet {
  return { set, content: contentOf(set) };
}

/** What the writer changed in one cluster, beyond the outcome. */
export interface SyncResult extends TargetOutcome {
  /** Names of the record sets written (created or changed) and deleted. */
  writtenSets: string[];
  deletedSets: string[];
}

export class RecordSetWriter {
  /** Our last write per cluster and record set, to tell a cache lagging behind it from a real difference. */
  private readonly lastWrite = new Map<string, { content: string; replacedVersion: string }>();
  /** Canonical content of the cached objects, per cluster and name, valid while the resourceVersion is. */
  private readonly existingContent = new Map<string, { version: string; content: string }>();
  /**
   * Per cluster and name, the content of our latest write, or that our latest request deleted it;
   * noted before the request, because its watch event often arrives before its response.
   */
  private readonly intended = new Map<string, { content: string } | 'deleted'>();

  constructor(private readonly opts: RecordSetWriterOptions) {}

  /**
   * Makes the record sets of one GatewayDNS in one cluster exactly `desired`:
   * writes the ones that differ, deletes ours that are no longer wanted (a
   * source cluster that stopped contributing, or a set named the older way).
   */
  async sync(
    namespace: string,
    cluster: string,
    owner: { namespace: string; name: string },
    desired: readonly DesiredRecordSet[],
    /** Sets left as they are where they exist (their source cluster's last word): not written, not deleted. */
    keep: ReadonlySet<string> = new Set(),
  ): Promise<SyncResult> {
    const ready = await this.ready(namespace, cluster);
    if ('outcome' in ready) {
      const outcome =
        ready.outcome.result === 'skipped' && !desired.length
          ? { cluster, result: 'current' as const }
          : ready.outcome;
      return { ...outcome, writtenSets: [], deletedSets: [] };
    }
    const { remote } = ready;
    const wanted = new Set(desired.map((d) => d.set.metadata.name));
    const sets = remote.recordSets();
    const kept = (name: string) => keep.has(name) && !!sets.get(name, this.opts.recordsNamespace);
    const stale = sets
      .list(this.opts.recordsNamespace)
      .map((s) => ({ name: s.metadata?.name ?? '', owned: ownedBy(s, owner) }))
      .filter((s) => s.owned && !wanted.has(s.name) && !kept(s.name))
      .map((s) => s.name);
    const results = await Promise.all([
      ...desired
        .filter((d) => !kept(d.set.metadata.name))
        .map((d) => this.apply(remote, d).then((r) => ({ ...r, op: 'write' as const }))),
      ...stale.map((name) => this.remove(remote, name).then((r) => ({ ...r, op: 'delete' as const }))),
    ]);
    const errors = results.flatMap((r) => ('error' in r ? [r.error] : []));
    const writtenSets = results.filter((r) => r.changed && r.op === 'write').map((r) => r.name);
    const deletedSets = results.filter((r) => r.changed && r.op === 'delete').map((r) => r.name);
    if (errors.length)
      return { cluster, result: 'failed', error: errors.join('; '), writtenSets, deletedSets };
    return {
      cluster,
      result: writtenSets.length || deletedSets.length ? 'written' : 'current',
      writtenSets,
      deletedSets,
    };
  }

  private async apply(
    remote: RemoteCluster,
    desired: DesiredRecordSet,
  ): Promise<{ name: string; changed: boolean } | { name: string; changed: false; error: string }> {
    const name = desired.set.metadata.name;
    const memoryKey = `${remote.key}|${name}`;
    const existing = remote.recordSets().get(name, this.opts.recordsNamespace);
    const existingVersion = existing?.metadata?.resourceVersion ?? '';
    if (existing) {
      let cached = this.existingContent.get(memoryKey);
      if (!cached || cached.version !== existingVersion || !existingVersion) {
        cached = { version: existingVersion, content: contentOf(existing) };
        this.existingContent.set(memoryKey, cached);
      }
      if (cached.content === desired.content) return { name, changed: false };
    }
    const last = this.lastWrite.get(memoryKey);
    // Skip only while the cache still shows the very object our last write replaced (it lags behind
    // that write). With nothing in the cache we cannot tell a lagging create from a set someone
    // deleted, so apply again: server-side apply of unchanged content is a no-op for the object.
    if (existing && last && last.content === desired.content && last.replacedVersion === existingVersion)
      return { name, changed: false };
    this.intended.set(memoryKey, { content: desired.content });
    try {
      await remote.write(
        `apply DNSRecordSet ${this.opts.recordsNamespace}/${name}`,
        this.opts.requestTimeoutMs,
        () =>
          remote.objects.patch(
            desired.set as KubernetesObject,
            undefined,
            undefined,
            FIELD_MANAGER,
            true,
            PatchStrategy.ServerSideApply,
          ),
      );
    } catch (err) {
      this.intended.delete(memoryKey);
      return { name, changed: false, error: `${name}: ${errorText(err)}` };
    }
    this.lastWrite.set(memoryKey, { content: desired.content, replacedVersion: existingVersion });
    return { name, changed: true };
  }

  private async remove(
    remote: RemoteCluster,
    name: string,
  ): Promise<{ name: string; changed: boolean } | { name: string; changed: false; error: string }> {
    const memoryKey = `${remote.key}|${name}`;
    this.lastWrite.delete(memoryKey);
    this.existingContent.delete(memoryKey);
    this.intended.set(memoryKey, 'deleted');
    try {
      await remote.write(
        `delete DNSRecordSet ${this.opts.recordsNamespace}/${name}`,
        this.opts.requestTimeoutMs,
        () =>
          remote.objects.delete({
            apiVersion: API_VERSION,
            kind: 'DNSRecordSet',
            metadata: { name, namespace: this.opts.recordsNamespace },
          }),
      );
    } catch (err) {
      if (httpStatus(err) === 404) return { name, changed: false };
      this.intended.delete(memoryKey);
      return { name, changed: false, error: `${name}: ${errorText(err)}` };
    }
    return { name, changed: true };
  }

  /**
   * Whether a watch event of a DNSRecordSet shows what our latest write or delete of it left: then
   * there is nothing to reconcile (the reconcile that wrote it wanted exactly that, and a change of
   * the world it read comes with its own event). Anything else, someone's edit or delete, is drift.
   */
  isOwnEcho(cluster: string, type: ChangeType, set: DNSRecordSet): boolean {
    const memoryKey = `${cluster}|${set.metadata?.name ?? ''}`;
    const intended = this.intended.get(memoryKey);
    if (intended === undefined) return false;
    if (type === 'delete') {
      if (intended !== 'deleted') return false;
      this.intended.delete(memoryKey);
      return true;
    }
    if (intended === 'deleted') return false;
    // Cached for the reconcile that may follow, as apply() caches it.
    const version = set.metadata?.resourceVersion ?? '';
    let cached = this.existingContent.get(memoryKey);
    if (!cached || cached.version !== version || !version) {
      cached = { version, content: contentOf(set) };
      this.existingContent.set(memoryKey, cached);
    }
    return cached.content === intended.content;
  }

  /** The cluster's client with its watches synced, or why not: unreachable (failed) or no dns-server (skipped). */
  private async ready(
    namespace: string,
    cluster: string,
  ): Promise<{ remote: RemoteCluster } | { outcome: TargetOutcome }> {
    const remote = this.opts.clusters.get(namespace, cluster);
    if (!remote)
      return {
        outcome: {
          cluster,
          result: 'failed',
          error: this.opts.clusters.problem(namespace, cluster) ?? 'no client',
        },
      };
    const namespaces = remote.namespaces();
    await namespaces.waitForFirstAttempt(this.opts.firstSyncTimeoutMs);
    // Reachability is the cluster's, as for the sources: whichever of its watches found it unreachable.
    const namespacesWhy = remote.unreachableReason(namespaces);
    if (namespacesWhy) return { outcome: { cluster, result: 'failed', error: namespacesWhy } };
    // Not before: a cluster without a dns-server may lack the DNSRecordSet CRD, and its watch would only fail.
    if (!namespaces.get(this.opts.recordsNamespace)) return { outcome: { cluster, result: 'skipped' } };
    const recordSets = remote.recordSets();
    await recordSets.waitForFirstAttempt(this.opts.firstSyncTimeoutMs);
    const recordSetsWhy = remote.unreachableReason(recordSets);
    if (recordSetsWhy) return { outcome: { cluster, result: 'failed', error: recordSetsWhy } };
    return { remote };
  }
}

function contentOf(set: Pick<DNSRecordSet, 'metadata' | 'spec'>): string {
  return canonical({ labels: set.metadata?.labels, records: set.spec?.records });
}

/** Ours and of this GatewayDNS: the labels the operator puts on every set it writes. */
function ownedBy(set: DNSRecordSet, owner: { namespace: string; name: string }): boolean {
  const labels = set.metadata?.labels ?? {};
  return Object.entries(gatewayDnsLabels(owner.namespace, owner.name)).every(([k, v]) => labels[k] === v);
}
