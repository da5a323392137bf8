// The API servers' own count of requests (apiserver_request_total), for the benches that ask what
// the operator costs the clusters: counted there, every build is measured the same way whatever its
// own metrics say.
import https from 'node:https';
import type { TestEnv } from '../test/support/testenv.js';
import { cpuSeconds, memoryMb, openSockets } from './proc.js';

// Counted by the API servers themselves (apiserver_request_total), so both
// builds are measured the same way whatever their own metrics say. The test
// environment runs every API server in one process with one metrics registry:
// any cluster's /metrics counts the requests of all of them.
export async function apiServerMetrics(env: TestEnv, names: string[]): Promise<string> {
  const kc = env.kubeConfig(names[0]!);
  const server = new URL(kc.getCurrentCluster()!.server);
  const opts: https.RequestOptions = { hostname: server.hostname, port: server.port, path: '/metrics' };
  await kc.applyToHTTPSOptions(opts);
  return new Promise<string>((resolve, reject) => {
    https
      .get(opts, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () =>
          res.statusCode === 200 ? resolve(body) : reject(new Error(`/metrics: HTTP ${res.statusCode}`)),
        );
      })
      .on('error', reject);
  });
}

/** One metric of the API servers summed by "VERB resource" over every line `keep` accepts. */
function metricBy(text: string, metric: string, keep: (labels: string) => boolean): Map<string, number> {
  const by = new Map<string, number>();
  const line = new RegExp(`^${metric}\\{(.*)\\} ([0-9.e+]+)$`);
  for (const row of text.split('\n')) {
    const m = line.exec(row);
    if (!m || !keep(m[1]!)) continue;
    const verb = /verb="([^"]*)"/.exec(m[1]!)?.[1] ?? '';
    const resource = /resource="([^"]*)"/.exec(m[1]!)?.[1] ?? '';
    const key = `${verb} ${resource}`;
    by.set(key, (by.get(key) ?? 0) + Number(m[2]));
  }
  return by;
}

/** apiserver_request_total summed by "VERB resource" over every line `keep` accepts. */
export function requestsBy(text: string, keep: (labels: string) => boolean): Map<string, number> {
  return metricBy(text, 'apiserver_request_total', keep);
}

// Only what the operator writes in workload clusters: the API servers write much of their own (leases, CRD status).
export const isOperatorWrite = (labels: string) =>
  /verb="(POST|PUT|PATCH|APPLY|DELETE)"/.test(labels) &&
  /resource="(dnsrecordsets|endpointslices)"/.test(labels);

export async function writeRequests(env: TestEnv, names: string[]): Promise<number> {
  let sum = 0;
  for (const n of requestsBy(await apiServerMetrics(env, names), isOperatorWrite).values()) sum += n;
  return sum;
}

/** Every request the API servers counted, by "VERB resource" (theirs, Cluster API's and ours). */
export async function allRequests(env: TestEnv, names: string[]): Promise<Map<string, number>> {
  return requestsBy(await apiServerMetrics(env, names), () => true);
}

export function difference(after: Map<string, number>, before: Map<string, number>): Map<string, number> {
  const d = new Map<string, number>();
  for (const [k, v] of after) if (v - (before.get(k) ?? 0) > 0) d.set(k, v - (before.get(k) ?? 0));
  return d;
}

/** What the operator lists, watches or writes, in the management and the workload clusters. */
export const OPERATOR_RESOURCES = new Set([
  'clusters',
  'gatewaydns',
  'secrets',
  'namespaces',
  'services',
  'endpointslices',
  'nodes',
  'configmaps',
  'dnsrecordsets',
  'serviceexports',
  'serviceimports',
  'clusterproperties',
  'customresourcedefinitions',
]);

/** The operator at rest after its cold start: what it costs while nothing changes (all its replicas together). */
export interface AtRest {
  seconds: number;
  requests: Map<string, number>;
  cpuSeconds: number;
  rssMb: number;
  /** The largest replica's resident memory (rssMb itself with one replica). */
  rssMaxMb: number;
  sockets: number;
}

export async function measureRest(
  env: TestEnv,
  names: string[],
  seconds: number,
  pids: number[] = [],
): Promise<AtRest> {
  const before = await allRequests(env, names);
  const sum = (of: (pid: number) => number) => pids.reduce((a, pid) => a + of(pid), 0);
  const cpuBefore = sum(cpuSeconds);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const requests = difference(await allRequests(env, names), before);
  return {
    seconds,
    requests,
    cpuSeconds: sum(cpuSeconds) - cpuBefore,
    rssMb: sum(memoryMb),
    rssMaxMb: Math.max(0, ...pids.map((pid) => memoryMb(pid))),
    sockets: sum(openSockets),
  };
}

/** Watches open now on the resources the operator watches (a gauge every API server shares). */
export async function watchesOpen(env: TestEnv, names: string[]): Promise<number> {
  const open = metricBy(await apiServerMetrics(env, names), 'apiserver_longrunning_requests', (labels) =>
    /verb="WATCH"/.test(labels),
  );
  let sum = 0;
  for (const [key, n] of open) if (OPERATOR_RESOURCES.has(key.split(' ')[1] ?? '')) sum += n;
  return sum;
}
