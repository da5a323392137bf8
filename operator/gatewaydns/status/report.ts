// What a reconcile tells people besides the status: for its writes, a log line
// and a metric per record set written or withdrawn, and one Event per cluster
// and reconcile (not per set: ten source clusters would make ten), and the
// clusters whose write failed (stale); for the
// traffic policy's health view, an Event per failover and recovery, and metrics.
import type { GatewayDNS, GatewayDNSStatus } from '../../../api/index.js';
import { DEGRADED } from '../../model/conditions.js';
import type { HealthView } from './health-view.js';
import { keyOfObject, objectKeyId } from '../../manager/runtime/workqueue.js';
import type { EventRecorder } from '../../manager/runtime/events.js';
import type { Logger } from '../../manager/runtime/log.js';
import type { GatewayDnsMetrics } from './metrics.js';
import type { SyncResult } from '../apply/record-sets.js';

export function reportWrites(
  gw: GatewayDNS,
  outcomes: SyncResult[],
  out: { events: EventRecorder; metrics: GatewayDnsMetrics; log: Logger },
): void {
  const namespace = gw.metadata.namespace ?? '';
  const failed = outcomes.filter((o) => o.result === 'failed').map((o) => `${namespace}/${o.cluster}`);
  const id = objectKeyId(keyOfObject(gw));
  if (failed.length) out.metrics.staleTargets.set(id, failed);
  else out.metrics.staleTargets.delete(id);
  for (const o of outcomes) {
    const cluster = `${namespace}/${o.cluster}`;
    for (const set of o.writtenSets) {
      out.metrics.recordSetsWritten++;
      out.log.info('record set written', { cluster, recordset: set });
    }
    for (const set of o.deletedSets) {
      out.metrics.recordSetsDeleted++;
      out.log.info('record set withdrawn: its source cluster answers no name', { cluster, recordset: set });
    }
    if (o.writtenSets.length)
      out.events.normal(
        gw,
        'RecordSetWritten',
        `record set(s) ${o.writtenSets.join(', ')} written to cluster ${o.cluster}`,
      );
    if (o.deletedSets.length)
      out.events.normal(
        gw,
        'RecordSetWithdrawn',
        `record set(s) ${o.deletedSets.join(', ')} withdrawn from cluster ${o.cluster}: they answer no name`,
      );
    if (o.result === 'failed') {
      out.log.warn('record set not written', { cluster, error: o.error });
      out.events.warning(gw, 'ClusterUnreachable', `cluster ${o.cluster}: ${o.error}`);
    }
  }
}

/**
 * What the health view tells people besides the status: an Event each time the Degraded condition
 * says something new (a failover, a recovery: its reason or message changed), and the per-GatewayDNS
 * traffic metrics.
 */
export function reportHealth(
  gw: GatewayDNS,
  next: GatewayDNSStatus,
  view: HealthView | undefined,
  out: { events: EventRecorder; metrics: GatewayDnsMetrics; log: Logger },
): void {
  const id = objectKeyId(keyOfObject(gw));
  if (!view) {
    out.metrics.trafficHealth.delete(id);
    return;
  }
  out.metrics.trafficHealth.set(id, {
    unhealthyClusters: [...view.candidates.values()].filter((h) => h.unhealthyFrom.length).length,
    failedOverClusters: view.vantages.filter((v) => v.answering !== undefined && v.answering > v.first)
      .length,
    noneHealthyClusters: view.vantages.filter((v) => v.answering === undefined).length,
  });
  const before = gw.status?.conditions?.find((c) => c.type === DEGRADED);
  const after = next.conditions?.find((c) => c.type === DEGRADED);
  if (!after || (before?.reason === after.reason && before.message === after.message)) return;
  if (after.status === 'True') {
    if (before?.status !== 'True') out.metrics.trafficTransitions.degraded++;
    out.log.warn('traffic policy degraded', { reason: after.reason, message: after.message });
    out.events.warning(gw, after.reason, after.message);
  } else if (after.status === 'False' && before?.status === 'True') {
    out.metrics.trafficTransitions.recovered++;
    out.log.info('traffic policy recovered', { message: after.message });
    out.events.normal(gw, 'Recovered', after.message);
  }
}
