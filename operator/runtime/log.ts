// The operator logs through the shared logger (process/log.ts); what is
// specific to Kubernetes API errors stays here.
export { createLogger, errorText, type Fields, type Level, type Logger } from '../../process/log.js';

/** The HTTP status of a client-node ApiException (or a watch error), if any. */
export function httpStatus(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown } | undefined;
  if (typeof e?.code === 'number') return e.code;
  if (typeof e?.statusCode === 'number') return e.statusCode;
  return undefined;
}
