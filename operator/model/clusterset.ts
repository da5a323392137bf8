// Which management namespaces are ClusterSets (Multi-Cluster Services): read
// by the MCS controller and by the Corefile wiring, so it lives here.
import type { V1Namespace } from '@kubernetes/client-node';
import { CLUSTERSET_LABEL } from '../../api/index.js';

/** The ClusterSet a management namespace opted into by its label, if any. */
export function clusterSetOf(namespace: V1Namespace | undefined): string | undefined {
  const value = namespace?.metadata?.labels?.[CLUSTERSET_LABEL];
  return value ? value : undefined;
}
