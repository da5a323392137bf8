// The local processes of the walkthrough (operator, dns-servers, CoreDNS, the
// test environment's helpers): each logs to its own file, and one call stops
// them all, also after a failed step.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, closeSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { stopChild } from '../test/support/stop-child.js';

export interface ManagedProcess {
  readonly name: string;
  readonly logPath: string;
  readonly child: ChildProcess;
}

export class ProcessGroup {
  private readonly processes: ManagedProcess[] = [];

  constructor(readonly logDir: string) {}

  start(name: string, command: string, args: string[], env: NodeJS.ProcessEnv = process.env): ManagedProcess {
    const logPath = path.join(this.logDir, `${name}.log`);
    const log = openSync(logPath, 'a');
    const child = spawn(command, args, { stdio: ['ignore', log, log], env });
    closeSync(log);
    // A command that cannot start says so in its log (where a failed step points), not as a crash.
    child.on('error', (err) => appendFileSync(logPath, `could not start ${command}: ${err.message}\n`));
    const managed: ManagedProcess = { name, logPath, child };
    this.processes.push(managed);
    return managed;
  }

  /** Stops one process: SIGTERM, then SIGKILL after graceMs. */
  async stop(p: ManagedProcess, graceMs = 5000): Promise<void> {
    await stopChild(p.child, graceMs);
    const i = this.processes.indexOf(p);
    if (i >= 0) this.processes.splice(i, 1);
  }

  /** Stops every process still running, the last started first. */
  async stopAll(): Promise<void> {
    for (const p of [...this.processes].reverse()) await this.stop(p);
  }
}

/** The last lines of a log file, for error messages. */
export function tail(logPath: string, lines = 20): string {
  try {
    return readFileSync(logPath, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return `(no log at ${logPath})`;
  }
}

/** Waits until an HTTP endpoint answers 2xx, or fails naming the process and its log. */
export async function waitForHttp(url: string, p: ManagedProcess, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (p.child.exitCode !== null || p.child.signalCode !== null)
      throw new Error(`${p.name} exited (code ${p.child.exitCode}); log ${p.logPath}:\n${tail(p.logPath)}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (res.ok) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${p.name} not ready at ${url} after ${timeoutMs} ms (${last}); log ${p.logPath}`);
}
