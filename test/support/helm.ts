// Helm's command line (.cache/bin/helm, built by test/testenv/build.sh from its
// Go module) against one cluster, with its cache, config and data in a folder
// of the test's own, so nothing of the user's Helm setup is read or written.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { binPath, repoRoot } from './paths.js';

const run = promisify(execFile);

export const CHART = path.join('charts', 'capi-dns');

export class Helm {
  constructor(
    /** Where Helm keeps its cache, config and data. */
    readonly home: string,
    /** The cluster's kubeconfig; none for commands that reach no cluster (lint, template). */
    readonly kubeconfig?: string,
  ) {}

  async run(args: string[], timeoutMs = 300_000): Promise<string> {
    const full = [...(this.kubeconfig ? ['--kubeconfig', this.kubeconfig] : []), ...args];
    try {
      const { stdout } = await run(binPath('helm'), full, {
        cwd: repoRoot(),
        timeout: timeoutMs,
        maxBuffer: 64 << 20,
        env: {
          ...process.env,
          HELM_CACHE_HOME: path.join(this.home, 'cache'),
          HELM_CONFIG_HOME: path.join(this.home, 'config'),
          HELM_DATA_HOME: path.join(this.home, 'data'),
        },
      });
      return stdout;
    } catch (err) {
      const e = err as Error & { stderr?: string };
      throw new Error(`helm ${full.join(' ')}: ${(e.stderr || e.message).trim()}`);
    }
  }

  /** `helm template` of charts/capi-dns with these flags (values, --set, -n). */
  template(release: string, flags: string[]): Promise<string> {
    return this.run(['template', release, CHART, ...flags]);
  }
}
