// What a reconcile's writes tell people: a log line and a metric per record
// set written or withdrawn, and one Event per cluster and reconcile (not per
// set: ten source clusters would make ten).
import type { GatewayDNS } from '../../api/index.js';
import type { EventRecorder } from '../runtime/events.js';
import type { Logger } from '../runtime/log.js';
import type { Metrics } from '../runtime/metrics.js';
import type { SyncResult } from './targets.js';

export function reportWrites(
  gw: GatewayDNS,
  outcomes: SyncResult[],
  out: { events: EventRecorder; metrics: Metrics; log: Logger },
): void {
  const namespace = gw.metadata.namespace ?? '';
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
