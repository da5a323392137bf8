// What the operator's caches keep of an object. Server-side apply's
// managedFields (a field set per manager, often larger than the spec) are
// read by nothing but the message naming who manages a foreign object, so
// each entry keeps its manager and operation and loses its field set, as
// controller-runtime's TransformStripManagedFields does for whole entries.
// With a record set cached in every cluster of its team, that is most of a
// cached object's metadata (issue 21).

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
