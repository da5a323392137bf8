// "A pod in cluster-b": a command whose /etc/resolv.conf names that cluster's
// CoreDNS, so names go through the ordinary system resolver (glibc, port 53)
// exactly as in a pod. A private mount namespace (unshare -m) bind-mounts the
// file over /etc/resolv.conf for this one command only.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export class PodNetwork {
  readonly resolvConf: string;

  constructor(dir: string, nameserver: string) {
    this.resolvConf = path.join(dir, 'resolv.conf');
    writeFileSync(this.resolvConf, `nameserver ${nameserver}\noptions timeout:1 attempts:2\n`);
  }

  /** Runs a command with this resolv.conf; resolves with stdout, rejects with stderr on failure. */
  async exec(command: string[], timeoutMs = 15_000): Promise<string> {
    const script = 'mount --bind "$0" /etc/resolv.conf && exec "$@"';
    try {
      const { stdout } = await run('unshare', ['-m', 'sh', '-c', script, this.resolvConf, ...command], {
        timeout: timeoutMs,
      });
      return stdout;
    } catch (err) {
      const e = err as Error & { stderr?: string; code?: number };
      throw new Error(`${command.join(' ')} failed (exit ${e.code}): ${(e.stderr ?? e.message).trim()}`);
    }
  }

  /** The command line a user can paste to do the same by hand. */
  shell(command: string): string {
    return `sudo unshare -m sh -c 'mount --bind ${this.resolvConf} /etc/resolv.conf && ${command}'`;
  }

  curl(url: string): Promise<string> {
    return this.exec(['curl', '-sS', '--fail', '--max-time', '5', url]);
  }

  /** Addresses of a name as the system resolver returns them (getent ahosts), sorted, deduplicated. */
  async resolve(name: string): Promise<string[]> {
    const out = await this.exec(['getent', 'ahosts', name]);
    return [
      ...new Set(
        out
          .split('\n')
          .filter(Boolean)
          .map((l) => l.split(/\s+/)[0] ?? ''),
      ),
    ].sort();
  }
}
