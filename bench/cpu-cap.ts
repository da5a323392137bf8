// A cap on the CPU a server may use, so that a bench measures the server and
// not its client: on 2 cores, one dnsperf thread cannot load a server that
// answers on the other core, and qps then varies with the client. A server
// capped at half a core is the limit whatever the client does. Linux cgroups,
// v1 (the cpu controller) or v2 (cpu.max); needs root.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { processTree } from './proc.js';

const V1 = '/sys/fs/cgroup/cpu';
const V2 = '/sys/fs/cgroup';
/** Short, so that a capped server runs in slices of 5 ms, not bursts of 50 ms its queries queue behind. */
const PERIOD_US = 10_000;

export class CpuCap {
  private constructor(
    private readonly dir: string,
    private readonly v2: boolean,
  ) {}

  /**
   * A new cgroup `name` capped at `share` of one core, or why there cannot be one here (not
   * root, no cpu controller).
   */
  static create(name: string, share: number): CpuCap | Error {
    const v1 = existsSync(path.join(V1, 'cpu.cfs_quota_us'));
    const v2 = !v1 && readIfExists(path.join(V2, 'cgroup.controllers'))?.split(/\s+/).includes('cpu');
    if (!v1 && !v2) return new Error('no cgroup cpu controller (v1 cpu, or v2 with cpu enabled)');
    const dir = path.join(v1 ? V1 : V2, `capi-dns-bench-${name}-${process.pid}`);
    const quota = String(Math.round(PERIOD_US * share));
    try {
      mkdirSync(dir);
      if (v1) {
        writeFileSync(path.join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
        writeFileSync(path.join(dir, 'cpu.cfs_quota_us'), quota);
      } else writeFileSync(path.join(dir, 'cpu.max'), `${quota} ${PERIOD_US}`);
    } catch (err) {
      try {
        rmdirSync(dir);
      } catch {
        // never made
      }
      return new Error(`cannot make cgroup ${dir}: ${(err as Error).message}`, { cause: err });
    }
    return new CpuCap(dir, !!v2);
  }

  /** Moves a process and its descendants (with all their threads) under the cap. */
  add(pid: number): void {
    for (const p of processTree(pid)) writeFileSync(path.join(this.dir, 'cgroup.procs'), String(p));
  }

  /** Moves what is left back to the root group and removes the cgroup. Idempotent. */
  remove(): void {
    if (!existsSync(this.dir)) return;
    const left = readIfExists(path.join(this.dir, 'cgroup.procs'))?.split(/\s+/).filter(Boolean) ?? [];
    for (const p of left) {
      try {
        writeFileSync(path.join(this.v2 ? V2 : V1, 'cgroup.procs'), p);
      } catch {
        // exited meanwhile
      }
    }
    rmdirSync(this.dir);
  }
}

function readIfExists(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
