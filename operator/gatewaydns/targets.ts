// Writes one GatewayDNS's DNSRecordSet into a workload cluster, or withdraws
// it. Compare-then-write against the watched cache, and server-side apply with
// one fixed field manager when something differs: a restart that computes the
// same records writes nothing.
import { PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import { API_VERSION, CONTROLLER_NAME, type DNSRecordSet } from '../../api/index.js';
import type { ClusterCache } from '../clusters/cache.js';
import type { RemoteCluster } from '../clusters/remote.js';
import { canonical, withTimeout } from '../runtime/equal.js';
import { errorText, httpStatus } from '../runtime/log.js';
import type { TargetOutcome } from './status.js';

export const FIELD_MANAGER = CONTROLLER_NAME;

export interface RecordSetWriterOptions {
  clusters: ClusterCache;
  recordsNamespace: string;
  firstSyncTimeoutMs: number;
  requestTimeoutMs: number;
}

export class RecordSetWriter {
  /** Our last write per cluster and record set, to tell a cache lagging behind it from a real difference. */
  private readonly lastWrite = new Map<string, { content: string; replacedVersion: string }>();

  constructor(private readonly opts: RecordSetWriterOptions) {}

  async apply(namespace: string, cluster: string, desired: DNSRecordSet): Promise<TargetOutcome> {
    const ready = await this.ready(namespace, cluster);
    if ('outcome' in ready) return ready.outcome;
    const { remote } = ready;
    const name = desired.metadata.name;
    const existing = remote.recordSets().get(name, this.opts.recordsNamespace);
    const content = canonical({ labels: desired.metadata.labels, records: desired.spec.records });
    if (
      existing &&
      canonical({ labels: existing.metadata?.labels, records: existing.spec?.records }) === content
    )
      return { cluster, result: 'current' };
    const memoryKey = `${remote.key}|${name}`;
    const existingVersion = existing?.metadata?.resourceVersion ?? '';
    const last = this.lastWrite.get(memoryKey);
    // Skip only while the cache still shows the very object our last write replaced (it lags behind
    // that write). With nothing in the cache we cannot tell a lagging create from a set someone
    // deleted, so apply again: server-side apply of unchanged content is a no-op for the object.
    if (existing && last && last.content === content && last.replacedVersion === existingVersion)
      return { cluster, result: 'current' };
    try {
      await withTimeout(
        remote.objects.patch(
          desired as KubernetesObject,
          undefined,
          undefined,
          FIELD_MANAGER,
          true,
          PatchStrategy.ServerSideApply,
        ),
        this.opts.requestTimeoutMs,
        `apply DNSRecordSet ${this.opts.recordsNamespace}/${name}`,
      );
    } catch (err) {
      return { cluster, result: 'failed', error: errorText(err) };
    }
    this.lastWrite.set(memoryKey, { content, replacedVersion: existingVersion });
    return { cluster, result: 'written' };
  }

  async remove(namespace: string, cluster: string, name: string): Promise<TargetOutcome> {
    const ready = await this.ready(namespace, cluster);
    if ('outcome' in ready)
      return ready.outcome.result === 'skipped' ? { cluster, result: 'current' } : ready.outcome;
    const { remote } = ready;
    this.lastWrite.delete(`${remote.key}|${name}`);
    if (!remote.recordSets().get(name, this.opts.recordsNamespace)) return { cluster, result: 'current' };
    try {
      await withTimeout(
        remote.objects.delete({
          apiVersion: API_VERSION,
          kind: 'DNSRecordSet',
          metadata: { name, namespace: this.opts.recordsNamespace },
        }),
        this.opts.requestTimeoutMs,
        `delete DNSRecordSet ${this.opts.recordsNamespace}/${name}`,
      );
    } catch (err) {
      if (httpStatus(err) !== 404) return { cluster, result: 'failed', error: errorText(err) };
    }
    return { cluster, result: 'written' };
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
