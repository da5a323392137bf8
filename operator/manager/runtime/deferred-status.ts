// The one status write at the end of a reconcile, as Cluster API's reconcilers
// defer their patch helper: whichever way the phases end (done, requeued,
// refused, failed), the status they arrived at is written once. The
// reconcile's own error is the one to retry on; a status write failing beside
// it is only logged.
import { errorText, type Logger } from './log.js';

export async function withDeferredStatus<T>(
  phases: () => Promise<T>,
  writeStatus: () => Promise<unknown>,
  log: Logger,
): Promise<T> {
  let failed = false;
  try {
    return await phases();
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    await writeStatus().catch((err: unknown) => {
      if (!failed) throw err;
      log.warn('status not written', { error: errorText(err) });
    });
  }
}
