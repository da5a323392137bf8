// What the operator's caches keep of an object. Server-side apply's
// managedFields (a field set per manager, often larger than the spec) are
// read by nothing but the message naming who manages a foreign object, so
// each entry keeps its manager and operation and loses its field set
// (controller-runtime's TransformStripManagedFields drops the entries whole).
// A record set is cached in every cluster of its team: at 50 clusters the
// operator's live heap held 21.4 MB of plain objects before, 11.5 after
// (bench/README.md, issue 21).

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
