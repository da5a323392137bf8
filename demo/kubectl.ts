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
}
