// Observe: the dns-servers' probe reports of the workload clusters of one
// namespace, from the watch each cluster's client keeps (no request per
// reconcile). A report that is not one is named in the status, never guessed at.
import {
  PROBE_REPORT_KEY,
  ProbeReportError,
  parseProbeReport,
  type ProbeReport,
} from '../../../api/index.js';
import type { ClusterCache } from '../../manager/clusters/cache.js';
import { PROBE_REPORTS } from './kinds.js';
import type { VantageReports } from '../status/health-view.js';

export async function readProbeReports(
  clusters: ClusterCache,
  namespace: string,
  recordsNamespace: string,
  targets: readonly string[],
  firstSyncTimeoutMs: number,
): Promise<VantageReports[]> {
  return Promise.all(
    targets.map(async (cluster): Promise<VantageReports> => {
      const remote = clusters.get(namespace, cluster);
      if (!remote)
        return { cluster, reports: [], error: clusters.problem(namespace, cluster) ?? 'no client' };
      const watch = remote.informer(PROBE_REPORTS, recordsNamespace);
      const why = await remote.synced([watch], firstSyncTimeoutMs);
      if (why) return { cluster, reports: [], error: why };
      const reports: ProbeReport[] = [];
      const bad: string[] = [];
      for (const cm of watch.list()) {
        const text = cm.data?.[PROBE_REPORT_KEY];
        try {
          if (text === undefined) throw new ProbeReportError(`no ${PROBE_REPORT_KEY}`);
          reports.push(parseProbeReport(text));
        } catch (err) {
          if (!(err instanceof ProbeReportError)) throw err;
          bad.push(`configmap ${cm.metadata?.namespace}/${cm.metadata?.name}: ${err.message}`);
        }
      }
      return { cluster, reports, ...(bad.length ? { error: bad.join('; ') } : {}) };
    }),
  );
}
