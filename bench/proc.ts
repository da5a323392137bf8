// What the benches read of a process from /proc (Linux): its memory, its CPU time, its sockets.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Resident memory of `pid` in MB: VmRSS now, or VmHWM, the peak so far. */
export function memoryMb(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** CPU seconds (user + system) a process has used. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (100 a second on Linux)
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
