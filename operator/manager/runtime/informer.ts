// A watched cache of one resource in the operator: runtime/restarting-informer.ts
// in place (one informer whose cache survives errors: an unreachable cluster
// keeps its last known objects), optionally metadata-only. Listed when it
// starts and again only after a failure (a watch too old to resume answers
// 410 Gone), as client-go's reflector does: a periodic relist would be a
// poll, a LIST per watched resource and cluster every few minutes at rest
// (issue 21), for nothing a resumed watch misses. Cached without managedFields'
// field sets (cache-transform.ts).
import type { KubeConfig, KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { listWatch, RestartingInformer } from '../../../runtime/restarting-informer.js';
import { stripManagedFields } from './cache-transform.js';

export type { ChangeType } from '../../../runtime/restarting-informer.js';

/** Accept headers of a metadata-only watch and list (Kubernetes API concepts, "Receiving resources as metadata"). */
export const PARTIAL_OBJECT_METADATA = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
export const PARTIAL_OBJECT_METADATA_LIST =
  'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';

export interface WatchOptions<T extends KubernetesObject> {
  kc: KubeConfig;
  /** The watch path, e.g. /api/v1/services or /apis/g/v/namespaces/ns/kind. */
  path: string;
  list: () => Promise<KubernetesListObject<T>>;
  labelSelector?: string;
  /** e.g. metadata.name=coredns: one object instead of a whole namespace's worth of events. */
  fieldSelector?: string;
  /**
   * Ask the API server for metadata only (PartialObjectMetadata, as controller-runtime's
   * metadata-only watches do): the watch's events carry no data or spec. The list function must
   * ask the same (PARTIAL_OBJECT_METADATA_LIST as its Accept header).
   */
  metadataOnly?: boolean;
  /** Full re-list period, jittered by ±10 % (default: never; tests may ask for one). */
  relistMs?: number;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

export class WatchedResource<T extends KubernetesObject> extends RestartingInformer<T> {
  constructor(opts: WatchOptions<T>) {
    super({
      make: () =>
        listWatch<T>({
          kc: opts.kc,
          path: opts.path,
          list: opts.list,
          labelSelector: opts.labelSelector,
          fieldSelector: opts.fieldSelector,
          accept: opts.metadataOnly ? PARTIAL_OBJECT_METADATA : undefined,
          transform: stripManagedFields,
        }),
      restart: 'in-place',
      backoff: { minMs: opts.minBackoffMs ?? 250, maxMs: opts.maxBackoffMs ?? 5_000, jitter: 0.2 },
      relistMs: opts.relistMs,
      relistJitter: 0.1,
    });
  }
}
