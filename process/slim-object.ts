// What an informer keeps of each object: everything but the field sets of
// metadata.managedFields. Server-side apply records, per field manager, a
// JSON tree of every field it owns (fieldsV1): on the objects the operator
// writes and watches (record sets, EndpointSlices, Services) it is the
// largest part of each, and nothing here reads it; who manages an object
// (the managers' names) is kept. controller-runtime's caches do the same
// (cache.TransformStripManagedFields). Measured in bench/scale.ts (issue 21).
import type { KubernetesObject } from '@kubernetes/client-node';

interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  subresource?: string;
  time?: unknown;
  fieldsType?: string;
  fieldsV1?: unknown;
}

/** Drops fieldsV1 from every managedFields entry, in place; returns the object. */
export function slimObject<T extends KubernetesObject>(object: T): T {
  const entries = object?.metadata?.managedFields as ManagedFieldsEntry[] | undefined;
  if (entries?.length)
    object.metadata!.managedFields = entries.map((e) => ({
      ...(e.manager !== undefined ? { manager: e.manager } : {}),
      ...(e.operation !== undefined ? { operation: e.operation } : {}),
      ...(e.apiVersion !== undefined ? { apiVersion: e.apiVersion } : {}),
      ...(e.subresource !== undefined ? { subresource: e.subresource } : {}),
    })) as NonNullable<KubernetesObject['metadata']>['managedFields'];
  return object;
}
