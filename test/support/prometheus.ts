// A real Prometheus (Debian's `prometheus` package) as a test's process: its
// own temporary directory for the configuration, rules and TSDB, scraping the
// given targets and evaluating the given rules every second, on an ephemeral
// loopback port. stop() ends it and removes the directory.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { freePort } from './dns.js';
import { eventually } from './kube.js';
import { stopChild } from './stop-child.js';

/** An active alert: pending since activeAt (RFC 3339), or firing. */
export interface Alert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
  activeAt: string;
}

export interface PrometheusProcess {
  url: string;
  child: ChildProcess;
  logs(): string;
  /** Runs an instant query; the result vector. */
  query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  /** Active alerts (pending and firing), as /api/v1/alerts lists them. */
  alerts(): Promise<Alert[]>;
  stop(): Promise<void>;
}

export async function startPrometheus(opts: {
  /** job name → host:port targets. */
  jobs: Record<string, string[]>;
  /** The text of a rules file. */
  rules: string;
  intervalSeconds?: number;
}): Promise<PrometheusProcess> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-prometheus-'));
  const interval = `${opts.intervalSeconds ?? 1}s`;
  writeFileSync(path.join(dir, 'rules.yaml'), opts.rules);
  writeFileSync(
    path.join(dir, 'prometheus.yml'),
    stringify({
      global: { scrape_interval: interval, scrape_timeout: interval, evaluation_interval: interval },
      rule_files: [path.join(dir, 'rules.yaml')],
      scrape_configs: Object.entries(opts.jobs).map(([job, targets]) => ({
        job_name: job,
        static_configs: [{ targets }],
      })),
    }),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    'prometheus',
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let logs = '';
  child.stderr?.on('data', (chunk: Buffer) => (logs += chunk.toString()));
  const stop = async () => {
    await stopChild(child, 5_000);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await eventually(async () => {
      if (child.exitCode !== null)
        throw new Error(`prometheus exited ${child.exitCode}: ${logs.slice(-2000)}`);
      const res = await fetch(`${url}/-/ready`);
      if (!res.ok) throw new Error(`/-/ready ${res.status}`);
    }, 30_000);
  } catch (err) {
    await stop();
    throw err;
  }
  const api = async <T>(pathAndQuery: string): Promise<T> => {
    const res = await fetch(`${url}${pathAndQuery}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${pathAndQuery}: ${body.error ?? res.status}`);
    return body.data;
  };
  return {
    url,
    child,
    logs: () => logs,
    query: async (expr) =>
      (
        await api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
          `/api/v1/query?query=${encodeURIComponent(expr)}`,
        )
      ).result,
    alerts: async () => (await api<{ alerts: Alert[] }>('/api/v1/alerts')).alerts,
    stop,
  };
}
