// What the operator's caches keep of an object. Server-side apply's
// managedFields (a field set per manager, often larger than the spec) are
// read by nothing but the message naming who manages a foreign object, so
// each entry keeps its manager and operation and loses its field set
// (controller-runtime's TransformStripManagedFields drops the entries whole).
// A record set is cached in every cluster of its team, so the field sets are
// a large share of the live heap at 50 clusters (bench/README.md).

interface WithManagedFields {
  metadata?: { managedFields?: { manager?: string; operation?: string }[] };
}

export function stripManagedFields<T extends object>(object: T): T {
  const metadata = (object as WithManagedFields).metadata;
  const entries = metadata?.managedFields;
  if (metadata && entries)
    metadata.managedFields = entries.map(({ manager, operation }) => ({ manager, operation }));
  return object;
}
