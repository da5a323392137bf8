// Keeps one GatewayDNS's DNSRecordSets (one per source cluster) in a workload
// cluster exactly as desired: writes what differs, deletes what is no longer
// wanted. What is written, and how, is the owned-object writer's
// (clusters/owned-writer.ts): compare first, so a restart that computes the
// same records writes nothing.
import type { KubernetesObject } from '@kubernetes/client-node';
import { API_VERSION, DNSRECORDSET_KIND, gatewayDnsLabels, type DNSRecordSet } from '../../../api/index.js';
import type { ClusterCache } from '../../manager/clusters/cache.js';
import { NAMESPACES } from '../../manager/clusters/kinds.js';
import { DNS_RECORD_SETS } from './kinds.js';
import type { OwnedObjectWriter } from '../../manager/clusters/owned-writer.js';
import type { RemoteCluster } from '../../manager/clusters/remote.js';
import { errorText } from '../../manager/runtime/log.js';
import { contentOf, type DesiredRecordSet } from '../plan/desired-record-set.js';

export interface RecordSetWriterOptions {
  clusters: ClusterCache;
  /** The operator's one writer of owned objects, shared with the mirrors. */
  writer: OwnedObjectWriter;
  recordsNamespace: string;
  firstSyncTimeoutMs: number;
  requestTimeoutMs: number;
}

/** What writing the record set to one workload cluster came to. */
export interface TargetOutcome {
  cluster: string;
  /** written: changed now; current: already right; skipped: no records namespace (no dns-server); failed. */
  result: 'written' | 'current' | 'skipped' | 'failed';
  error?: string;
}

/** What the writer changed in one cluster, beyond the outcome. */
export interface SyncResult extends TargetOutcome {
  /** Names of the record sets written (created or changed) and deleted. */
  writtenSets: string[];
  deletedSets: string[];
}

export class RecordSetWriter {
  constructor(private readonly opts: RecordSetWriterOptions) {}

  /**
   * Makes the record sets of one GatewayDNS in one cluster exactly `desired`:
   * writes the ones that differ, deletes ours that are no longer wanted (a
   * source cluster that stopped contributing, or a set whose name the naming rule no longer gives).
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
    const sets = remote.informer(DNS_RECORD_SETS, this.opts.recordsNamespace);
    const kept = (name: string) => keep.has(name) && !!sets.get(name, this.opts.recordsNamespace);
    const stale = sets
      .list(this.opts.recordsNamespace)
      .filter(
        (s) => ownedBy(s, owner) && !wanted.has(s.metadata?.name ?? '') && !kept(s.metadata?.name ?? ''),
      );
    const results = await Promise.all([
      ...desired
        .filter((d) => !kept(d.set.metadata.name))
        .map((d) => this.apply(remote, d).then((r) => ({ ...r, op: 'write' as const }))),
      ...stale.map((s) => this.remove(remote, s).then((r) => ({ ...r, op: 'delete' as const }))),
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
    const existing = remote
      .informer(DNS_RECORD_SETS, this.opts.recordsNamespace)
      .get(name, this.opts.recordsNamespace);
    try {
      const { changed } = await this.opts.writer.ensure(remote, existing, {
        object: desired.set as KubernetesObject,
        content: desired.content,
        contentOf,
      });
      return { name, changed };
    } catch (err) {
      return { name, changed: false, error: `${name}: ${errorText(err)}` };
    }
  }

  private async remove(
    remote: RemoteCluster,
    set: DNSRecordSet,
  ): Promise<{ name: string; changed: boolean } | { name: string; changed: false; error: string }> {
    const name = set.metadata?.name ?? '';
    try {
      const changed = await this.opts.writer.delete(remote, {
        apiVersion: API_VERSION,
        kind: DNSRECORDSET_KIND,
        namespace: this.opts.recordsNamespace,
        name,
        uid: set.metadata?.uid,
      });
      return { name, changed };
    } catch (err) {
      return { name, changed: false, error: `${name}: ${errorText(err)}` };
    }
  }

  /**
   * The cluster's client with its watches synced, or why not: unreachable (failed), or no dns-server
   * or not up yet (skipped).
   */
  private async ready(
    namespace: string,
    cluster: string,
  ): Promise<{ remote: RemoteCluster } | { outcome: TargetOutcome }> {
    const remote = this.opts.clusters.get(namespace, cluster);
    // Never connected (Cluster API does not report it up): nothing of ours can be there yet.
    if (!remote && this.opts.clusters.waiting(namespace, cluster))
      return { outcome: { cluster, result: 'skipped' } };
    if (!remote)
      return {
        outcome: {
          cluster,
          result: 'failed',
          error: this.opts.clusters.problem(namespace, cluster) ?? 'no client',
        },
      };
    const namespaces = remote.informer(NAMESPACES);
    // Reachability is the cluster's, as for the sources: whichever of its watches found it unreachable.
    const namespacesWhy = await remote.synced([namespaces], this.opts.firstSyncTimeoutMs);
    if (namespacesWhy) return { outcome: { cluster, result: 'failed', error: namespacesWhy } };
    // Not before: a cluster without a dns-server may lack the DNSRecordSet CRD, and its watch would only fail.
    if (!namespaces.get(this.opts.recordsNamespace)) return { outcome: { cluster, result: 'skipped' } };
    const recordSets = remote.informer(DNS_RECORD_SETS, this.opts.recordsNamespace);
    const recordSetsWhy = await remote.synced([recordSets], this.opts.firstSyncTimeoutMs);
    if (recordSetsWhy) return { outcome: { cluster, result: 'failed', error: recordSetsWhy } };
    return { remote };
  }
}

/** Ours and of this GatewayDNS: the labels the operator puts on every set it writes. */
function ownedBy(set: DNSRecordSet, owner: { namespace: string; name: string }): boolean {
  const labels = set.metadata?.labels ?? {};
  return Object.entries(gatewayDnsLabels(owner.namespace, owner.name)).every(([k, v]) => labels[k] === v);
}
