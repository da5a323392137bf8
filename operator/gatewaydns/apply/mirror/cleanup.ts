// --cleanup-mirrors (and --cleanup): for uninstalling, with the operator
// scaled to zero. Deletes every Service and EndpointSlice the operator keeps
// as a mirror in every workload cluster it knows, found by our labels alone
// (so also mirrors of GatewayDNS objects that are gone), and nothing else.
import {
  CONTROLLER_NAME,
  ENDPOINTSLICE_MANAGED_BY_LABEL,
  GATEWAYDNS_NAME_LABEL,
  MANAGED_BY_LABEL,
  MIRROR_CONTROLLER,
} from '../../../../api/index.js';
import type { ClusterCache } from '../../../manager/clusters/cache.js';
import type { RemoteCluster } from '../../../manager/clusters/remote.js';
import { withTimeout } from '../../../manager/runtime/equal.js';
import { errorText, httpStatus, type Logger } from '../../../manager/runtime/log.js';

export interface MirrorCleanupOptions {
  clusters: ClusterCache;
  /** Every workload cluster, as "namespace/name" of its Cluster. */
  listClusters: () => { namespace: string; name: string }[];
  log: Logger;
  timeoutMs: number;
  requestTimeoutMs?: number;
}

/** Removes the mirrors from every cluster; returns the clusters still failing after timeoutMs, with why. */
export async function removeAllMirrors(opts: MirrorCleanupOptions): Promise<Map<string, string>> {
  const deadline = Date.now() + opts.timeoutMs;
  const failing = new Map<string, string>();
  await Promise.all(
    opts.listClusters().map(async ({ namespace, name }) => {
      const key = `${namespace}/${name}`;
      for (;;) {
        try {
          const remote = opts.clusters.get(namespace, name);
          if (!remote) throw new Error(opts.clusters.problem(namespace, name) ?? 'no client');
          const removed = await removeFrom(remote, opts.requestTimeoutMs ?? 10_000);
          opts.log.info('mirrors removed', { cluster: key, ...removed });
          failing.delete(key);
          return;
        } catch (err) {
          failing.set(key, errorText(err));
          if (Date.now() > deadline) return;
          await new Promise((r) => setTimeout(r, 1000));
        }
      }
    }),
  );
  return failing;
}

async function removeFrom(
  remote: RemoteCluster,
  timeoutMs: number,
): Promise<{ services: number; endpointSlices: number }> {
  const slices = await withTimeout(
    remote.discovery.listEndpointSliceForAllNamespaces({
      labelSelector: `${ENDPOINTSLICE_MANAGED_BY_LABEL}=${MIRROR_CONTROLLER}`,
    }),
    timeoutMs,
    'list mirror EndpointSlices',
  );
  const services = await withTimeout(
    remote.core.listServiceForAllNamespaces({
      labelSelector: `${MANAGED_BY_LABEL}=${CONTROLLER_NAME},${GATEWAYDNS_NAME_LABEL}`,
    }),
    timeoutMs,
    'list mirror Services',
  );
  const gone = (err: unknown) => {
    if (httpStatus(err) !== 404 && httpStatus(err) !== 409) throw err;
  };
  for (const s of slices.items) {
    const { name = '', namespace = '', uid } = s.metadata ?? {};
    await withTimeout(
      remote.discovery.deleteNamespacedEndpointSlice({ name, namespace, body: { preconditions: { uid } } }),
      timeoutMs,
      `delete EndpointSlice ${namespace}/${name}`,
    ).catch(gone);
  }
  for (const s of services.items) {
    const { name = '', namespace = '', uid } = s.metadata ?? {};
    await withTimeout(
      remote.core.deleteNamespacedService({ name, namespace, body: { preconditions: { uid } } }),
      timeoutMs,
      `delete Service ${namespace}/${name}`,
    ).catch(gone);
  }
  return { services: services.items.length, endpointSlices: slices.items.length };
}
