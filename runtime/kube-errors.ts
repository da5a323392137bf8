// What a Kubernetes API failure says about itself, shared by every process
// that talks to an API server.

/** The HTTP status of a client-node ApiException (or a watch error), if any. */
export function httpStatus(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown } | undefined;
  if (typeof e?.code === 'number') return e.code;
  if (typeof e?.statusCode === 'number') return e.statusCode;
  return undefined;
}
