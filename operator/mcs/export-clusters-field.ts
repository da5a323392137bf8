// Whether each member's ServiceExport CRD has status.clusters (KEP PR
// kubernetes/enhancements#6329; the CRD of sigs.k8s.io/mcs-api v0.5.2 has
// not): the CRD is read once per client, and again after refreshMs so that a
// CRD upgraded in place is noticed. Unreadable reads as absent: the field is
// informational, and the conditions are written either way.
import type { KubernetesObject } from '@kubernetes/client-node';
import { MCS_GROUP, MCS_VERSION, SERVICEEXPORT_PLURAL } from '../../api/index.js';
import type { RemoteCluster } from '../manager/clusters/remote.js';
import { withTimeout } from '../manager/runtime/equal.js';
import { crdServesExportClusters } from './export-status.js';

export class ExportClustersField {
  private readonly known = new WeakMap<RemoteCluster, { at: number; served: boolean }>();

  constructor(private readonly opts: { refreshMs: number; requestTimeoutMs: number }) {}

  async served(remote: RemoteCluster): Promise<boolean> {
    const last = this.known.get(remote);
    if (last && Date.now() - last.at < this.opts.refreshMs) return last.served;
    let served = false;
    try {
      const crd = await withTimeout(
        remote.objects.read({
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          metadata: { name: `${SERVICEEXPORT_PLURAL}.${MCS_GROUP}` },
        } as KubernetesObject & { metadata: { name: string } }),
        this.opts.requestTimeoutMs,
        `ServiceExport CRD of cluster ${remote.key}`,
      );
      served = crdServesExportClusters(crd, MCS_VERSION);
    } catch {
      served = last?.served ?? false;
    }
    this.known.set(remote, { at: Date.now(), served });
    return served;
  }
}
