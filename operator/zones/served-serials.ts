// Observe: the serials the dns-server replicas of the workload clusters serve
// (api/served-serials.ts), from the watch each cluster's client keeps (no
// request per reconcile). A report that is not one is logged and left out;
// a cluster that cannot be read has no serial, as it has no glue.
import {
  SERVED_SERIALS_KEY,
  ServedSerialsError,
  parseServedSerials,
  type ServedSerials,
} from '../../api/index.js';
import type { ClusterCache } from '../manager/clusters/cache.js';
import type { Logger } from '../manager/runtime/log.js';
import { SERVED_SERIALS } from './kinds.js';

export interface ServedSerialsReaderOptions {
  clusters: ClusterCache;
  recordsNamespace: string;
  firstSyncTimeoutMs: number;
  log: Logger;
}

export class ServedSerialsReader {
  /** The reports already logged as bad, by ConfigMap and text: logged once, not every pass. */
  private readonly loggedBad = new Set<string>();

  constructor(private readonly opts: ServedSerialsReaderOptions) {}

  /** Per cluster ("namespace/name"): its replicas' reports. */
  async read(
    clusters: readonly { namespace: string; name: string }[],
  ): Promise<Map<string, ServedSerials[]>> {
    const ns = this.opts.recordsNamespace;
    const read = await Promise.all(
      clusters.map(async ({ namespace, name }): Promise<[string, ServedSerials[]]> => {
        const key = `${namespace}/${name}`;
        const remote = this.opts.clusters.get(namespace, name);
        if (!remote || remote.healthy === false) return [key, []];
        const watch = remote.informer(SERVED_SERIALS, ns);
        if (await remote.synced([watch], this.opts.firstSyncTimeoutMs)) return [key, []];
        const reports: ServedSerials[] = [];
        for (const cm of watch.list()) {
          const text = cm.data?.[SERVED_SERIALS_KEY];
          try {
            if (text === undefined) throw new ServedSerialsError(`no ${SERVED_SERIALS_KEY}`);
            reports.push(parseServedSerials(text));
          } catch (err) {
            if (!(err instanceof ServedSerialsError)) throw err;
            const configMap = `${cm.metadata?.namespace}/${cm.metadata?.name}`;
            if (this.loggedBad.has(`${key}/${configMap}\n${text}`)) continue;
            if (this.loggedBad.size > 1000) this.loggedBad.clear();
            this.loggedBad.add(`${key}/${configMap}\n${text}`);
            this.opts.log.warn('served serials report left out', {
              cluster: key,
              configMap,
              error: err.message,
            });
          }
        }
        return [key, reports];
      }),
    );
    return new Map(read);
  }
}
