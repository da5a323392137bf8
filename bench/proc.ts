// What the benches read of a process from /proc (Linux): its memory, its CPU time, its sockets.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Resident memory of `pid` in MB: VmRSS now, or VmHWM, the peak so far. */
export function memoryMb(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** CPU seconds (user + system) a process has used. */
export function cpuSeconds(pid: number): number {
  const { user, system } = cpuTimes(pid);
  return user + system;
}

/** CPU seconds a process has used, in user space and in the kernel (all its threads). */
export function cpuTimes(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime, stime in clock ticks (100 a second on Linux)
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
}

/** cpuTimes summed over the process and its descendants (NSD's and our answering processes). */
export function treeCpu(pid: number): { user: number; system: number; total: number } {
  let user = 0;
  let system = 0;
  for (const p of processTree(pid)) {
    try {
      const t = cpuTimes(p);
      user += t.user;
      system += t.system;
    } catch {
      // exited meanwhile
    }
  }
  return { user, system, total: user + system };
}

/** Sockets the process holds open (connections and listeners). */
export function openSockets(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:');
    } catch {
      return false; // closed meanwhile
    }
  }).length;
}

/** The process and its descendants (NSD forks its serving processes), from /proc/PID/task/PID/children. */
export function processTree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    try {
      const children = readFileSync(`/proc/${out[i]}/task/${out[i]}/children`, 'utf8');
      out.push(...children.split(/\s+/).filter(Boolean).map(Number));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** memoryMb summed over the process and its descendants. */
export function treeMemoryMb(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  return processTree(pid).reduce((sum, p) => {
    try {
      return sum + memoryMb(p, field);
    } catch {
      return sum;
    }
  }, 0);
}
