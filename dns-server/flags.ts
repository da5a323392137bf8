// Command-line flags → configuration. Pure, so that it is tested without a process.
import { parseArgs } from 'node:util';
import { DEFAULT_RECORDS_NAMESPACE, DEFAULT_ZONE } from '../api/index.js';
import { parseName } from './zone/name.js';
import type { ZoneConfig } from './zone/compile.js';
import type { ZoneDefaults } from './zone/declared.js';
import type { Level } from '../process/log.js';
import type { TcpLimits } from './serve/tcp-connections.js';

export interface Config {
  listen: { host: string; port: number };
  healthListen: { host: string; port: number } | undefined;
  zones: ZoneConfig[];
  /** The SOA and NS flags: what a zone declared through the API (capi-dns-zones) gets unless it says otherwise. */
  zoneDefaults: ZoneDefaults;
  recordsFile: string | undefined;
  kubernetes:
    | {
        kubeconfig: string | undefined;
        namespace: string;
        resyncMs: number;
        /** Multi-Cluster Services: the zone answered from this cluster's ServiceImports; none when ''. */
        clustersetDomain: string | undefined;
        /**
         * This replica's Pod: its probe report (api/probe-report.ts) is named after it and owned by
         * it (with the uid); none is written without a name.
         */
        pod: { name: string; uid: string | undefined } | undefined;
      }
    | undefined;
  maxUdpSize: number;
  tcp: TcpLimits;
  filePollMs: number;
  debounceMs: number;
  /** After SIGTERM, answer this long while /readyz fails, then stop (CoreDNS's health lameduck). */
  lameDuckMs: number;
  /** End the build worker after this long without a build (0: after every build). */
  buildWorkerIdleMs: number;
  /** Most heap, in MiB, the build thread may grow to; a build past it fails and the last data stays served. */
  buildHeapLimitMiB: number;
  logLevel: Level;
  logQueries: boolean;
  /** Processes answering queries on the shared sockets (cluster module); 1: this process alone. */
  workers: number;
}

const FLAGS = {
  listen: {
    type: 'string',
    default: '0.0.0.0:53',
    help: 'HOST:PORT for DNS over UDP and TCP; :PORT is every address of IPv4 and IPv6',
  },
  zone: {
    type: 'string',
    multiple: true,
    help: `zone to serve authoritatively, repeatable (default ${DEFAULT_ZONE})`,
  },
  'records-file': { type: 'string', help: 'YAML file of DNSRecordSet documents, reloaded when it changes' },
  kubeconfig: {
    type: 'string',
    help: 'kubeconfig of the cluster to watch DNSRecordSets in (implies --kubernetes)',
  },
  kubernetes: {
    type: 'boolean',
    help: 'watch DNSRecordSets (in-cluster config unless --kubeconfig); the default when no --records-file is given',
  },
  namespace: { type: 'string', default: DEFAULT_RECORDS_NAMESPACE, help: 'namespace of the DNSRecordSets' },
  'clusterset-domain': {
    type: 'string',
    default: 'clusterset.local',
    help: "Multi-Cluster Services zone, answered from this cluster's ServiceImports and MCS EndpointSlices (Kubernetes mode; '' for none)",
  },
  'pod-name': {
    type: 'string',
    help: "this replica's Pod (Kubernetes mode): its health-check probe report is written under this name for the operator's GatewayDNS status",
  },
  'pod-uid': {
    type: 'string',
    help: "this replica's Pod uid: its probe report is owned by the Pod and goes with it",
  },
  resync: { type: 'string', default: '5m', help: 'start a freshly listed informer this often (±20 %)' },
  'health-listen': {
    type: 'string',
    help: 'HOST:PORT for HTTP /healthz, /readyz and /metrics (off if absent)',
  },
  'soa-mname': { type: 'string', help: 'SOA primary name server (default ns1.<zone>)' },
  'soa-rname': { type: 'string', help: 'SOA mailbox as a name (default hostmaster.<zone>)' },
  ns: { type: 'string', multiple: true, help: 'NS target at the apex, repeatable (default the SOA primary)' },
  'soa-ttl': { type: 'string', default: '30', help: 'TTL of the SOA and NS records, seconds' },
  'soa-refresh': { type: 'string', default: '3600', help: 'SOA refresh, seconds' },
  'soa-retry': { type: 'string', default: '600', help: 'SOA retry, seconds' },
  'soa-expire': { type: 'string', default: '86400', help: 'SOA expire, seconds' },
  'soa-minimum': {
    type: 'string',
    default: '30',
    help: 'SOA minimum: TTL of negative answers (RFC 2308), seconds',
  },
  'max-udp-size': {
    type: 'string',
    default: '1232',
    help: 'largest UDP response whatever EDNS offers, octets',
  },
  'tcp-idle-timeout': {
    type: 'string',
    default: '10s',
    help: 'close a TCP connection with no query in progress and no answer unsent after this long',
  },
  'tcp-message-timeout': {
    type: 'string',
    default: '2s',
    help: 'reset a TCP connection whose started message is not complete after this long',
  },
  'tcp-max-lifetime': {
    type: 'string',
    default: '5m',
    help: 'close a TCP connection after this long, after its last answer',
  },
  'tcp-max-queries': {
    type: 'string',
    default: '10000',
    help: 'close a TCP connection after this many queries',
  },
  'tcp-max-connections': {
    type: 'string',
    default: '1000',
    help: 'most TCP connections open at once; at the cap the longest-idle one is closed for a new one',
  },
  'tcp-max-connections-per-client': {
    type: 'string',
    default: '100',
    help: 'most TCP connections open at once from one client address',
  },
  lameduck: {
    type: 'string',
    default: '5s',
    help: 'after SIGTERM, keep answering this long while /readyz fails, then stop (0s: stop at once)',
  },
  'file-poll': { type: 'string', default: '500ms', help: 'how often to check the records file for changes' },
  debounce: {
    type: 'string',
    default: '20ms',
    help: 'wait this long after a change for more before rebuilding',
  },
  'build-worker-idle': {
    type: 'string',
    default: '60s',
    help: 'end the build thread after this long without a rebuild, returning its memory (0s: after every build)',
  },
  'build-heap-limit': {
    type: 'string',
    default: '128Mi',
    help: 'most heap the build thread may use (Mi); a larger build fails and the last data stays served',
  },
  'log-level': { type: 'string', default: 'info', help: 'debug, info, warn or error' },
  'log-queries': { type: 'boolean', help: 'log every query (costly; for debugging)' },
  workers: {
    type: 'string',
    default: '1',
    help: 'processes answering on the shared sockets; above 1 the first process builds and they answer',
  },
  help: { type: 'boolean', short: 'h', help: 'print this help' },
} as const;

export class UsageError extends Error {}

export function usage(): string {
  const lines = Object.entries(FLAGS).map(([name, f]) => {
    const value = f.type === 'string' ? ` ${name === 'zone' || name === 'ns' ? 'NAME' : 'VALUE'}` : '';
    const def = 'default' in f ? ` (default ${f.default})` : '';
    return `  --${name}${value}\n      ${f.help}${def}`;
  });
  return [
    'Usage: node dist/dns-server/main.js [flags]',
    '',
    'An authoritative DNS server for the cross-cluster zone, fed by DNSRecordSet objects',
    '(Kubernetes mode) and/or a records file (standalone mode).',
    '',
    'Flags:',
    ...lines,
    '',
    'Durations: 500ms, 10s, 5m. Example:',
    '  node dist/dns-server/main.js --listen 127.0.0.1:5353 --zone xcc.test --records-file records.yaml',
    '',
  ].join('\n');
}

/** Parses argv (without node and the script); returns undefined when --help was asked for. */
export function parseFlags(argv: string[]): Config | undefined {
  const options = Object.fromEntries(
    Object.entries(FLAGS).map(([k, f]) => [
      k,
      {
        type: f.type,
        ...('multiple' in f ? { multiple: true } : {}),
        ...('short' in f ? { short: f.short } : {}),
      },
    ]),
  ) as Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>;
  let values: Record<string, unknown>;
  try {
    values = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) return undefined;
  const str = (k: keyof typeof FLAGS): string | undefined => {
    const v = values[k];
    if (v !== undefined) return v as string;
    const f = FLAGS[k];
    return 'default' in f ? (f.default as string) : undefined;
  };
  const int = (k: keyof typeof FLAGS, min: number, max: number): number => {
    const raw = str(k)!;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < min || n > max)
      throw new UsageError(`--${k} ${raw}: not an integer from ${min} to ${max}`);
    return n;
  };
  const names = (k: 'zone' | 'ns'): string[] => (values[k] as string[] | undefined) ?? [];
  const name = (raw: string, flag: string): string => {
    try {
      return parseName(raw, { wildcard: false });
    } catch (err) {
      throw new UsageError(`--${flag}: ${(err as Error).message}`);
    }
  };

  const recordsFile = str('records-file');
  const kubeconfig = str('kubeconfig');
  const useKubernetes = Boolean(values.kubernetes) || kubeconfig !== undefined || recordsFile === undefined;
  const rawClusterset = str('clusterset-domain') ?? '';
  const clustersetDomain =
    useKubernetes && rawClusterset !== '' ? name(rawClusterset, 'clusterset-domain') : undefined;
  const zoneNames = (names('zone').length > 0 ? names('zone') : [DEFAULT_ZONE]).map((z) => name(z, 'zone'));
  if (new Set(zoneNames).size !== zoneNames.length) throw new UsageError('--zone: the same zone twice');
  if (clustersetDomain) {
    if (
      zoneNames.some(
        (z) =>
          z === clustersetDomain || z.endsWith(`.${clustersetDomain}`) || clustersetDomain.endsWith(`.${z}`),
      )
    )
      throw new UsageError(
        `--clusterset-domain ${clustersetDomain}: overlaps a --zone (one server, one owner per name)`,
      );
    zoneNames.push(clustersetDomain);
  }
  const u32 = 2 ** 32 - 1;
  const zones = zoneNames.map((zone): ZoneConfig => {
    const mname = name(str('soa-mname') ?? `ns1.${zone}`, 'soa-mname');
    return {
      name: zone,
      mname,
      rname: name(str('soa-rname') ?? `hostmaster.${zone}`, 'soa-rname'),
      nameServers: names('ns').length > 0 ? names('ns').map((n) => name(n, 'ns')) : [mname],
      ttl: int('soa-ttl', 0, 2 ** 31 - 1),
      refresh: int('soa-refresh', 0, u32),
      retry: int('soa-retry', 0, u32),
      expire: int('soa-expire', 0, u32),
      minimum: int('soa-minimum', 0, u32),
    };
  });

  const level = str('log-level') as Level;
  if (!['debug', 'info', 'warn', 'error'].includes(level))
    throw new UsageError(`--log-level ${level}: not a level`);
  const health = str('health-listen');
  return {
    listen: hostPort(str('listen')!, 'listen'),
    healthListen: health === undefined ? undefined : hostPort(health, 'health-listen'),
    zones,
    zoneDefaults: {
      ...(str('soa-mname') !== undefined ? { mname: name(str('soa-mname')!, 'soa-mname') } : {}),
      ...(str('soa-rname') !== undefined ? { rname: name(str('soa-rname')!, 'soa-rname') } : {}),
      nameServers: names('ns').map((n) => name(n, 'ns')),
      ttl: int('soa-ttl', 0, 2 ** 31 - 1),
      refresh: int('soa-refresh', 0, u32),
      retry: int('soa-retry', 0, u32),
      expire: int('soa-expire', 0, u32),
      minimum: int('soa-minimum', 0, u32),
    },
    recordsFile,
    kubernetes: useKubernetes
      ? {
          kubeconfig,
          namespace: str('namespace')!,
          resyncMs: duration(str('resync')!, 'resync'),
          clustersetDomain,
          pod: podOf(str('pod-name'), str('pod-uid')),
        }
      : undefined,
    maxUdpSize: int('max-udp-size', 512, 65535),
    tcp: {
      idleMs: duration(str('tcp-idle-timeout')!, 'tcp-idle-timeout'),
      messageTimeoutMs: duration(str('tcp-message-timeout')!, 'tcp-message-timeout'),
      maxLifetimeMs: duration(str('tcp-max-lifetime')!, 'tcp-max-lifetime'),
      maxQueries: int('tcp-max-queries', 1, 2 ** 31 - 1),
      maxConnections: int('tcp-max-connections', 1, 1_000_000),
      maxPerClient: int('tcp-max-connections-per-client', 1, 1_000_000),
    },
    filePollMs: duration(str('file-poll')!, 'file-poll'),
    debounceMs: duration(str('debounce')!, 'debounce'),
    buildWorkerIdleMs: duration(str('build-worker-idle')!, 'build-worker-idle'),
    buildHeapLimitMiB: mebibytes(str('build-heap-limit')!, 'build-heap-limit'),
    lameDuckMs: duration(str('lameduck')!, 'lameduck'),
    logLevel: level,
    logQueries: Boolean(values['log-queries']),
    workers: int('workers', 1, 64),
  };
}

function podOf(
  name: string | undefined,
  uid: string | undefined,
): { name: string; uid: string | undefined } | undefined {
  if (name === undefined || name === '') {
    if (uid) throw new UsageError('--pod-uid: needs --pod-name');
    return undefined;
  }
  if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(name))
    throw new UsageError(`--pod-name ${name}: not a Kubernetes object name`);
  return { name, uid: uid || undefined };
}

/** "127.0.0.1:53", "[::1]:53", ":53" (host '': every address of both families). */
export function hostPort(raw: string, flag: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(raw);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new UsageError(`--${flag} ${raw}: not HOST:PORT`);
  return { host: m[1] ?? m[2] ?? '', port };
}

/** "160Mi" → 160 (MiB, the unit V8's heap limits take; at least 16). */
export function mebibytes(raw: string, flag: string): number {
  const m = /^(\d{1,6})Mi$/.exec(raw);
  if (!m || Number(m[1]) < 16)
    throw new UsageError(`--${flag} ${raw}: not a size like 160Mi (at least 16Mi)`);
  return Number(m[1]);
}

/** "500ms", "10s", "5m", "1h" → milliseconds. */
export function duration(raw: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(raw);
  if (!m) throw new UsageError(`--${flag} ${raw}: not a duration like 500ms, 10s or 5m`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
  return Number(m[1]) * unit;
}
