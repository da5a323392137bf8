// Command-line flags → configuration. Pure, so that it is tested without a process.
import { hostname } from 'node:os';
import { DEFAULT_RECORDS_NAMESPACE, DEFAULT_ZONE } from '../api/index.js';
import { hostPort, readArgv, UsageError, type FlagValues } from './flag-values.js';
import { parseName } from './zone/name.js';
import type { ZoneConfig } from './zone/compile.js';
import type { ZoneDefaults } from './zone/declared.js';
import type { Level } from '../runtime/log.js';
import type { TcpLimits } from './serve/tcp-connections.js';
import {
  TRANSFER_FLAGS,
  TransferFlagError,
  transferFlagsOf,
  withSecondaries,
  type TransferFlags,
} from './transfer/flags.js';
import type { RateLimitOptions } from './serve/rate-limit.js';

export interface Config {
  listen: { host: string; port: number };
  healthListen: { host: string; port: number } | undefined;
  zones: ZoneConfig[];
  /** The SOA and NS flags: what a zone declared through the API (capi-dns-zones) gets unless it says otherwise. */
  zoneDefaults: ZoneDefaults;
  recordsFile: string | undefined;
  /** Zones signed with a key from a file (--dnssec-key), by zone. */
  dnssecKeyFiles: { zone: string; file: string }[];
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
  /** Response rate limiting of UDP answers (serve/rate-limit.ts); off at 0 responses per second. */
  rateLimit: RateLimitOptions;
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
  /** UDP through the batched native module (falling back to dgram where it cannot load), or dgram. */
  udpIo: 'native' | 'dgram';
  /** Zone transfers (AXFR, IXFR, NOTIFY; ADR 0216): the keys, the bounds. Unset: none offered. */
  transfer: TransferFlags | undefined;
  /** --transfer-max-concurrent, --ixfr-journal-octets: also for the zones declared with transfer (Kubernetes mode). */
  transferBounds: { maxConcurrent: number; journalOctets: number };
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
  'dnssec-key': {
    type: 'string',
    multiple: true,
    help: 'ZONE=FILE: sign ZONE with the PKCS#8 PEM private key (ECDSA P-256 or Ed25519) in FILE, reloaded when it changes; repeatable',
  },
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
    help: "this replica's Pod (Kubernetes mode): its health-check probe report is written under this name for the operator's GatewayDNS status (default in a Pod: its host name, which is the Pod's name)",
  },
  'pod-uid': {
    type: 'string',
    help: "this replica's Pod uid: its reports (probes, served serials) are owned by the Pod and go with it; without it the replica deletes them when it stops",
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
  'udp-io': {
    type: 'string',
    default: 'native',
    help: "UDP system calls: 'native' batches them (recvmmsg/sendmmsg; dgram where the module cannot load), 'dgram' one per datagram",
  },
  'max-udp-size': {
    type: 'string',
    default: '1232',
    help: 'largest UDP response whatever EDNS offers, octets',
  },
  'rrl-responses-per-second': {
    type: 'string',
    default: '0',
    help: "response rate limiting (BIND's RRL, NSD's rrl-ratelimit): UDP responses per second per client prefix and response (the name and type; the zone for NXDOMAIN); past it dropped or slipped; 0: off. Set it where the dns-server is exposed (NSD's default is 200)",
  },
  'rrl-slip': {
    type: 'string',
    default: '2',
    help: 'every Nth rate-limited response is sent truncated (TC) instead of dropped, so that a real client retries over TCP; 0: drop them all',
  },
  'rrl-ipv4-prefix-length': {
    type: 'string',
    default: '24',
    help: 'client prefix of IPv4 addresses for rate limiting',
  },
  'rrl-ipv6-prefix-length': {
    type: 'string',
    default: '56',
    help: 'client prefix of IPv6 addresses for rate limiting',
  },
  'rrl-table-size': {
    type: 'string',
    default: '65536',
    help: 'buckets of the rate limiting table (a power of two; about 17 octets each, fixed at start whatever the flood)',
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
  ...TRANSFER_FLAGS,
  help: { type: 'boolean', short: 'h', help: 'print this help' },
} as const;

type Flags = FlagValues<keyof typeof FLAGS>;

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

/**
 * Where the process runs, for defaults: in a Pod (the kubelet sets KUBERNETES_SERVICE_HOST) the
 * host name is the Pod's name unless its spec sets another (spec.hostname).
 */
export interface Surroundings {
  inPod: boolean;
  hostname: string;
}

export function surroundings(): Surroundings {
  return { inPod: Boolean(process.env.KUBERNETES_SERVICE_HOST), hostname: hostname() };
}

/** Parses argv (without node and the script); returns undefined when --help was asked for. */
export function parseFlags(argv: string[], around: Surroundings = surroundings()): Config | undefined {
  const flags = readArgv(argv, FLAGS);
  if (!flags) return undefined;
  const recordsFile = flags.string('records-file');
  const kubeconfig = flags.string('kubeconfig');
  const useKubernetes = flags.set('kubernetes') || kubeconfig !== undefined || recordsFile === undefined;
  const clustersetDomain = useKubernetes ? clustersetDomainOf(flags) : undefined;
  const transfer = transferOf(flags);
  const zones = withSecondaries(zonesOf(flags, clustersetDomain), transfer, clustersetDomain);
  const logLevel = logLevelOf(flags);
  const health = flags.string('health-listen');
  return {
    listen: hostPort(flags.string('listen')!, 'listen'),
    healthListen: health === undefined ? undefined : hostPort(health, 'health-listen'),
    zones,
    zoneDefaults: zoneDefaultsOf(flags),
    recordsFile,
    dnssecKeyFiles: flags.list('dnssec-key').map(dnssecKeyFileOf),
    kubernetes: useKubernetes ? kubernetesOf(flags, kubeconfig, clustersetDomain, around) : undefined,
    maxUdpSize: flags.int('max-udp-size', 512, 65535),
    rateLimit: rateLimitOf(flags),
    tcp: tcpLimitsOf(flags),
    filePollMs: flags.duration('file-poll'),
    debounceMs: flags.duration('debounce'),
    buildWorkerIdleMs: flags.duration('build-worker-idle'),
    buildHeapLimitMiB: flags.mebibytes('build-heap-limit'),
    lameDuckMs: flags.duration('lameduck'),
    logLevel,
    logQueries: flags.set('log-queries'),
    workers: flags.int('workers', 1, 64),
    udpIo: udpIoOf(flags.string('udp-io')!),
    transfer,
    transferBounds: {
      maxConcurrent: flags.int('transfer-max-concurrent', 1, 10_000),
      journalOctets: flags.int('ixfr-journal-octets', 0, 2 ** 31 - 1),
    },
  };
}

function transferOf(flags: Flags): TransferFlags | undefined {
  try {
    return transferFlagsOf(flags);
  } catch (err) {
    if (err instanceof TransferFlagError) throw new UsageError(err.message);
    throw err;
  }
}

function rateLimitOf(flags: Flags): RateLimitOptions {
  const tableSize = flags.int('rrl-table-size', 2, 1 << 24);
  if ((tableSize & (tableSize - 1)) !== 0)
    throw new UsageError(`--rrl-table-size ${tableSize}: a power of two (65536, 262144, …)`);
  return {
    responsesPerSecond: flags.int('rrl-responses-per-second', 0, 1_000_000),
    slip: flags.int('rrl-slip', 0, 10),
    ipv4PrefixLength: flags.int('rrl-ipv4-prefix-length', 0, 32),
    ipv6PrefixLength: flags.int('rrl-ipv6-prefix-length', 0, 128),
    tableSize,
  };
}

function dnssecKeyFileOf(raw: string): { zone: string; file: string } {
  const eq = raw.indexOf('=');
  if (eq <= 0 || eq === raw.length - 1) throw new UsageError(`--dnssec-key ${raw}: ZONE=FILE`);
  return { zone: nameOf(raw.slice(0, eq), 'dnssec-key'), file: raw.slice(eq + 1) };
}

function udpIoOf(raw: string): 'native' | 'dgram' {
  if (raw !== 'native' && raw !== 'dgram') throw new UsageError(`--udp-io ${raw}: 'native' or 'dgram'`);
  return raw;
}

/** A domain name given to a flag (no wildcard). */
function nameOf(raw: string, flag: string): string {
  try {
    return parseName(raw, { wildcard: false });
  } catch (err) {
    throw new UsageError(`--${flag}: ${(err as Error).message}`);
  }
}

/** The clusterset zone (Kubernetes mode); none when ''. */
function clustersetDomainOf(flags: Flags): string | undefined {
  const raw = flags.string('clusterset-domain') ?? '';
  return raw === '' ? undefined : nameOf(raw, 'clusterset-domain');
}

/** Every zone served: the --zone ones (or the default), then the clusterset zone, each with its SOA and NS. */
function zonesOf(flags: Flags, clustersetDomain: string | undefined): ZoneConfig[] {
  const given = flags.list('zone');
  const names = (given.length > 0 ? given : [DEFAULT_ZONE]).map((z) => nameOf(z, 'zone'));
  if (new Set(names).size !== names.length) throw new UsageError('--zone: the same zone twice');
  if (clustersetDomain) {
    const overlaps = (z: string) =>
      z === clustersetDomain || z.endsWith(`.${clustersetDomain}`) || clustersetDomain.endsWith(`.${z}`);
    if (names.some(overlaps))
      throw new UsageError(
        `--clusterset-domain ${clustersetDomain}: overlaps a --zone (one server, one owner per name)`,
      );
    names.push(clustersetDomain);
  }
  return names.map((zone) => apexOf(flags, zone));
}

/** The --soa-* and --ns flags, for the zones declared through the API (zone/declared.ts). */
function zoneDefaultsOf(flags: Flags): ZoneDefaults {
  const u32 = 2 ** 32 - 1;
  const mname = flags.string('soa-mname');
  const rname = flags.string('soa-rname');
  return {
    ...(mname !== undefined ? { mname: nameOf(mname, 'soa-mname') } : {}),
    ...(rname !== undefined ? { rname: nameOf(rname, 'soa-rname') } : {}),
    nameServers: flags.list('ns').map((n) => nameOf(n, 'ns')),
    ttl: flags.int('soa-ttl', 0, 2 ** 31 - 1),
    refresh: flags.int('soa-refresh', 0, u32),
    retry: flags.int('soa-retry', 0, u32),
    expire: flags.int('soa-expire', 0, u32),
    minimum: flags.int('soa-minimum', 0, u32),
  };
}

/** A zone's SOA and NS, from the --soa-* and --ns flags. */
function apexOf(flags: Flags, zone: string): ZoneConfig {
  const u32 = 2 ** 32 - 1;
  const mname = nameOf(flags.string('soa-mname') ?? `ns1.${zone}`, 'soa-mname');
  const ns = flags.list('ns');
  return {
    name: zone,
    mname,
    rname: nameOf(flags.string('soa-rname') ?? `hostmaster.${zone}`, 'soa-rname'),
    nameServers: ns.length > 0 ? ns.map((n) => nameOf(n, 'ns')) : [mname],
    ttl: flags.int('soa-ttl', 0, 2 ** 31 - 1),
    refresh: flags.int('soa-refresh', 0, u32),
    retry: flags.int('soa-retry', 0, u32),
    expire: flags.int('soa-expire', 0, u32),
    minimum: flags.int('soa-minimum', 0, u32),
  };
}

function kubernetesOf(
  flags: Flags,
  kubeconfig: string | undefined,
  clustersetDomain: string | undefined,
  around: Surroundings,
): Config['kubernetes'] {
  return {
    kubeconfig,
    namespace: flags.string('namespace')!,
    resyncMs: flags.duration('resync'),
    clustersetDomain,
    // Without --pod-name a replica in a Pod still reports, under its host name: a report
    // silently missing left the GatewayDNS status blind to this replica's probes.
    pod: podOf(
      flags.string('pod-name') ?? (around.inPod ? around.hostname : undefined),
      flags.string('pod-uid'),
    ),
  };
}

function tcpLimitsOf(flags: Flags): TcpLimits {
  return {
    idleMs: flags.duration('tcp-idle-timeout'),
    messageTimeoutMs: flags.duration('tcp-message-timeout'),
    maxLifetimeMs: flags.duration('tcp-max-lifetime'),
    maxQueries: flags.int('tcp-max-queries', 1, 2 ** 31 - 1),
    maxConnections: flags.int('tcp-max-connections', 1, 1_000_000),
    maxPerClient: flags.int('tcp-max-connections-per-client', 1, 1_000_000),
  };
}

function logLevelOf(flags: Flags): Level {
  const level = flags.string('log-level') as Level;
  if (!['debug', 'info', 'warn', 'error'].includes(level))
    throw new UsageError(`--log-level ${level}: not a level`);
  return level;
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
