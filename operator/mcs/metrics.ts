// The Multi-Cluster Services controller's own metrics, registered on the
// manager's registry.
import { registerRead, type Registry } from '../../runtime/metrics.js';

export class McsMetrics {
  /** ServiceExports whose Conflict condition is True: "cluster namespace/cluster name/export namespace/export name". */
  readonly exportConflicts = new Set<string>();

  constructor(registry: Registry) {
    registerRead(
      registry,
      'capi_dns_serviceexport_conflict',
      'ServiceExports whose Conflict condition is True (KEP-1645: the exports of the name disagree), 1 each.',
      'gauge',
      ['cluster_namespace', 'cluster_name', 'namespace', 'serviceexport'],
      () =>
        [...this.exportConflicts].map((key) => {
          const [cluster_namespace = '', cluster_name = '', namespace = '', serviceexport = ''] =
            key.split('/');
          return [{ cluster_namespace, cluster_name, namespace, serviceexport }, 1];
        }),
    );
  }
}
