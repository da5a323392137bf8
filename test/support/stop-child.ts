// Ending a child process the same way everywhere: the signal asked for, then
// SIGKILL if it is still alive after graceMs; resolves once it has exited.
import type { ChildProcess } from 'node:child_process';

export async function stopChild(
  child: ChildProcess,
  graceMs: number,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}
