// Cluster API rewrites a Cluster's status often (conditions, the remote
// connection probe, resyncs); the operator acts only on its labels, its
// lifecycle (paused, deleting) and whether it may be connected to. Each
// controller that watches Clusters subscribes through this filter.
import type { ChangeType } from '../../../runtime/restarting-informer.js';
import type { WatchedResource } from '../runtime/informer.js';
import { objectKey } from '../runtime/workqueue.js';
import { clusterFingerprint, type ClusterObject } from './lifecycle.js';
import type { KubernetesObject } from '@kubernetes/client-node';

export function onClusterChange<T extends ClusterObject & KubernetesObject>(
  clusters: WatchedResource<T>,
  listener: (type: ChangeType, cluster: T) => void,
): void {
  const seen = new Map<string, string>();
  clusters.onChange((type, cluster) => {
    const key = objectKey(cluster);
    if (type === 'delete') {
      seen.delete(key);
      return listener(type, cluster);
    }
    const fingerprint = clusterFingerprint(cluster);
    if (seen.get(key) === fingerprint) return;
    seen.set(key, fingerprint);
    listener(type, cluster);
  });
}
