// kubectl as the walkthrough's user types it: the real binary built from the
// same Kubernetes release as the test environment's API servers.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export class Kubectl {
  constructor(
    readonly binary: string,
    readonly kubeconfig: string,
  ) {}

  /** The command line a user would type, for progress output and hints. */
  line(args: string[]): string {
    return `kubectl --kubeconfig ${this.kubeconfig} ${args.join(' ')}`;
  }

  async run(args: string[]): Promise<string> {
    try {
      const { stdout } = await run(this.binary, ['--kubeconfig', this.kubeconfig, ...args], {
        timeout: 60_000,
      });
      return stdout;
    } catch (err) {
      const e = err as Error & { stderr?: string };
      throw new Error(`${this.line(args)}: ${(e.stderr ?? e.message).trim()}`);
    }
  }

  /**
   * `kubectl run NAME --restart=Never -- COMMAND` to its end, and what the container printed, read
   * from its log. Not `run -i --rm`: attaching to a container that ends at once can lose its output
   * (kubernetes/kubernetes#27264), which is how a curl that had answered read as empty. The pod is
   * deleted, also when it failed, so the next try may take its name.
   */
  async runToCompletion(
    pod: string,
    runArgs: string[],
    timeoutMs = 60_000,
  ): Promise<{ phase: 'Succeeded' | 'Failed'; log: string }> {
    let failed = false;
    try {
      await this.run(['run', pod, '--restart=Never', ...runArgs]);
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const phase = await this.run(['get', 'pod', pod, '-o', 'jsonpath={.status.phase}']);
        if (phase === 'Succeeded' || phase === 'Failed') return { phase, log: await this.run(['logs', pod]) };
        if (Date.now() > deadline)
          throw new Error(`pod ${pod} is still ${phase || 'not scheduled'} after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 250));
      }
    } catch (err) {
      failed = true;
      throw err;
    } finally {
      // A failed delete is the error only when the run itself went well: it must not hide why it did not.
      await this.run(['delete', 'pod', pod, '--ignore-not-found', '--wait=true']).catch((err: unknown) => {
        if (!failed) throw err;
      });
    }
  }
}
