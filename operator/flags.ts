// Command-line flags of capi-dns-controller.
import { parseArgs } from 'node:util';
import os from 'node:os';
import { DEFAULT_CLUSTER_MANAGER, DEFAULT_RECORDS_NAMESPACE, DEFAULT_ZONE } from '../api/index.js';
import type { Level } from './manager/runtime/log.js';

export interface Flags {
  kubeconfig?: string;
  /** Watch only this management namespace (all when unset). */
  namespace?: string;
  domainSuffix: string;
  /** Further zones the dns-servers serve: custom and route host names in them are published, and CoreDNS forwards each. */
  zones: string[];
  /** Multi-Cluster Services: the zone a ClusterSet member's CoreDNS forwards to its dns-server. */
  clustersetDomain: string;
  recordsNamespace: string;
  healthListen: string;
  /** Keep the zone's forward block in each workload cluster's CoreDNS Corefile. */
  manageCorefiles: boolean;
  /** Remove the forward block from every workload cluster's Corefile, then exit (for uninstalling). */
  cleanupCorefiles: boolean;
  /** Delete every mirror Service and EndpointSlice (spec.mirror) from every workload cluster, then exit. */
  cleanupMirrors: boolean;
  /** Let a kubeconfig Secret use users[].user.exec and auth-provider (they run commands in the operator). */
  insecureKubeconfigExec: boolean;
  /** Let a kubeconfig Secret turn off TLS verification (insecure-skip-tls-verify, an http:// server). */
  insecureKubeconfigTls: boolean;
  /** How long a Cluster deleted while paused stays frozen before its records are withdrawn (ms). */
  pausedDepartureGraceMs: number;
  leaderElect: boolean;
  leaderElectionNamespace: string;
  leaderElectionId: string;
  identity: string;
  /** Active-active replicas (ADR 0207): management namespaces hashed into this many shards; 0: one active replica. */
  shards: number;
  workers: number;
  /** Writes to one workload cluster: sustained requests a second, and how many at once above that. */
  workloadQps: number;
  workloadBurst: number;
  /** Writes in flight to all workload clusters at once. */
  maxConcurrentWrites: number;
  /** Where the fleet's clusters come from: Cluster API, ClusterProfiles (KEP-4322), or both. */
  inventory: 'cluster-api' | 'cluster-profile' | 'both';
  /** Namespaces besides a ClusterProfile's own where its credentials Secret may be read. */
  clusterProfileSecretNamespaces: string[];
  /** Publish each Cluster API Cluster as a ClusterProfile (KEP-4322), 'produce', or not ('off'). */
  clusterProfiles: 'off' | 'produce';
  /** The cluster manager of the ClusterProfiles this operator keeps (spec.clusterManager.name, label). */
  clusterManagerName: string;
  logLevel: Level;
  help: boolean;
}

export const USAGE = `Usage: node dist/operator/main.js [flags]

capi-dns-controller: turns GatewayDNS objects of a Cluster API management
cluster into DNSRecordSet objects in every workload cluster of the same namespace.

Flags:
  --kubeconfig PATH                  management cluster kubeconfig (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)
  --namespace NAME                   act only on this management namespace (default: all)
  --domain-suffix NAME               suffix of generated names (default ${DEFAULT_ZONE})
  --zone NAME                        a further zone the dns-servers serve (repeatable): host names in it
                                     (spec.hostnames, routes of a spec.gatewayRef Gateway) are published,
                                     and each workload cluster's CoreDNS forwards it
  --clusterset-domain NAME           Multi-Cluster Services zone forwarded by ClusterSet members' CoreDNS (default clusterset.local)
  --records-namespace NAME           namespace of DNSRecordSets in workload clusters (default ${DEFAULT_RECORDS_NAMESPACE})
  --health-listen HOST:PORT          /healthz, /readyz, /metrics (default :8081)
  --no-manage-corefiles              leave every workload cluster's kube-system/coredns alone
  --cleanup-corefiles                remove the forward block from every workload cluster's Corefile, then exit
  --cleanup-mirrors                  delete every mirror Service and EndpointSlice (spec.mirror) from every workload cluster, then exit
  --cleanup                          both of the above: what to run before uninstalling, with the operator scaled to zero
  --insecure-kubeconfig-exec         let workload kubeconfig Secrets use exec and auth-provider, which run
                                     commands inside the operator (default off: such a kubeconfig is refused)
  --insecure-kubeconfig-tls          let workload kubeconfig Secrets set insecure-skip-tls-verify or an http://
                                     server (default off: refused)
  --paused-departure-grace DURATION  how long a Cluster deleted while paused (clusterctl move, a GitOps recreate)
                                     keeps its records before they are withdrawn (default 10m)
  --leader-elect / --no-leader-elect use a Lease so that one replica of several is active (default on)
  --leader-election-namespace NAME   namespace of the Lease (default kube-system)
  --leader-election-id NAME          name of the Lease (default capi-dns-controller)
  --identity NAME                    this replica's name in the Lease (default hostname_pid)
  --shards N                         run replicas active-active: management namespaces hashed into N shards,
                                     each served by one replica holding its Lease (capi-dns-controller-shard-K
                                     in the leader-election namespace); replaces leader election. Keep N
                                     fixed for the fleet's life, several times the replicas (default 0: off)
  --workers N                        GatewayDNS reconciled in parallel (default 4)
  --workload-qps N                   writes a second to one workload cluster, sustained (default 20; 0: no limit)
  --workload-burst N                 writes to one workload cluster above that rate at once (default 30)
  --max-concurrent-writes N          writes in flight to all workload clusters together (default 32); more
                                     wait their turn, each cluster in turn, their timeout starting when they start
  --inventory KIND                   where the fleet's clusters come from: cluster-api (default: Clusters and
                                     their kubeconfig Secrets), cluster-profile (SIG Multicluster's ClusterProfiles,
                                     credentials read in process: kubeconfig-secretreader, secretreader), or both
  --cluster-profile-secret-namespace NAME
                                     a namespace besides a ClusterProfile's own where its credentials Secret may be
                                     read (repeatable; default: its own only)
  --cluster-profiles MODE            produce: keep a ClusterProfile (SIG Multicluster's cluster inventory,
                                     KEP-4322) for each Cluster, in its namespace, owned by it; off (default)
  --cluster-manager-name NAME        the ClusterProfiles' spec.clusterManager.name and x-k8s.io/cluster-manager
                                     label (default ${DEFAULT_CLUSTER_MANAGER})
  --log-level LEVEL                  debug, info, warn, error (default info)
  --help                             this text
`;

export function parseFlags(argv: string[]): Flags {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      kubeconfig: { type: 'string' },
      namespace: { type: 'string' },
      'domain-suffix': { type: 'string', default: DEFAULT_ZONE },
      zone: { type: 'string', multiple: true, default: [] },
      'clusterset-domain': { type: 'string', default: 'clusterset.local' },
      'records-namespace': { type: 'string', default: DEFAULT_RECORDS_NAMESPACE },
      'health-listen': { type: 'string', default: ':8081' },
      'no-manage-corefiles': { type: 'boolean', default: false },
      'cleanup-corefiles': { type: 'boolean', default: false },
      'cleanup-mirrors': { type: 'boolean', default: false },
      cleanup: { type: 'boolean', default: false },
      'insecure-kubeconfig-exec': { type: 'boolean', default: false },
      'insecure-kubeconfig-tls': { type: 'boolean', default: false },
      'paused-departure-grace': { type: 'string', default: '10m' },
      'leader-elect': { type: 'boolean', default: true },
      'no-leader-elect': { type: 'boolean', default: false },
      'leader-election-namespace': { type: 'string', default: 'kube-system' },
      'leader-election-id': { type: 'string', default: 'capi-dns-controller' },
      identity: { type: 'string', default: `${os.hostname()}_${process.pid}` },
      shards: { type: 'string', default: '0' },
      workers: { type: 'string', default: '4' },
      'workload-qps': { type: 'string', default: '20' },
      'workload-burst': { type: 'string', default: '30' },
      'max-concurrent-writes': { type: 'string', default: '32' },
      inventory: { type: 'string', default: 'cluster-api' },
      'cluster-profile-secret-namespace': { type: 'string', multiple: true, default: [] },
      'cluster-profiles': { type: 'string', default: 'off' },
      'cluster-manager-name': { type: 'string', default: DEFAULT_CLUSTER_MANAGER },
      'log-level': { type: 'string', default: 'info' },
      help: { type: 'boolean', default: false },
    },
  });
  const workers = Number(values.workers);
  if (!Number.isInteger(workers) || workers < 1)
    throw new Error(`--workers: want a positive integer, got ${values.workers}`);
  const count = (
    flag: 'workload-qps' | 'workload-burst' | 'max-concurrent-writes' | 'shards',
    min: number,
  ): number => {
    const n = Number(values[flag]);
    if (!Number.isInteger(n) || n < min)
      throw new Error(`--${flag}: want an integer of at least ${min}, got ${values[flag]}`);
    return n;
  };
  const logLevel = values['log-level'] as Level;
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel))
    throw new Error(`--log-level: unknown level ${logLevel}`);
  const grace = /^(\d+)(ms|s|m)$/.exec(values['paused-departure-grace']);
  if (!grace)
    throw new Error(
      `--paused-departure-grace: want a duration like 30s or 10m, got ${values['paused-departure-grace']}`,
    );
  const pausedDepartureGraceMs =
    Number(grace[1]) * { ms: 1, s: 1000, m: 60_000 }[grace[2] as 'ms' | 's' | 'm'];
  const domainSuffix = values['domain-suffix'].replace(/^\.+|\.+$/g, '');
  if (!/^([a-z0-9]([-a-z0-9]*[a-z0-9])?\.)*[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(domainSuffix))
    throw new Error(`--domain-suffix: not a DNS name: ${values['domain-suffix']}`);
  const clustersetDomain = values['clusterset-domain'].replace(/^\.+|\.+$/g, '');
  if (!/^([a-z0-9]([-a-z0-9]*[a-z0-9])?\.)*[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(clustersetDomain))
    throw new Error(`--clusterset-domain: not a DNS name: ${values['clusterset-domain']}`);
  if (clustersetDomain === domainSuffix)
    throw new Error(`--clusterset-domain: the same zone as --domain-suffix (${domainSuffix})`);
  const zones = zonesOf(values.zone, [domainSuffix, clustersetDomain]);
  const clusterProfiles = values['cluster-profiles'];
  if (clusterProfiles !== 'off' && clusterProfiles !== 'produce')
    throw new Error(`--cluster-profiles: want produce or off, got ${clusterProfiles}`);
  const inventory = values.inventory;
  if (inventory !== 'cluster-api' && inventory !== 'cluster-profile' && inventory !== 'both')
    throw new Error(`--inventory: want cluster-api, cluster-profile or both, got ${inventory}`);
  if (clusterProfiles === 'produce' && inventory === 'cluster-profile')
    throw new Error(
      '--cluster-profiles=produce publishes Cluster API Clusters: it needs --inventory cluster-api or both',
    );
  const clusterManagerName = values['cluster-manager-name'];
  // A label value (x-k8s.io/cluster-manager): 63 characters, alphanumerics with - _ . inside.
  if (!/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/.test(clusterManagerName))
    throw new Error(`--cluster-manager-name: not a label value: ${clusterManagerName}`);
  return {
    kubeconfig: values.kubeconfig,
    namespace: values.namespace,
    domainSuffix,
    zones,
    clustersetDomain,
    recordsNamespace: values['records-namespace'],
    healthListen: values['health-listen'],
    manageCorefiles: !values['no-manage-corefiles'],
    cleanupCorefiles: values['cleanup-corefiles'] || values.cleanup,
    cleanupMirrors: values['cleanup-mirrors'] || values.cleanup,
    insecureKubeconfigExec: values['insecure-kubeconfig-exec'],
    insecureKubeconfigTls: values['insecure-kubeconfig-tls'],
    pausedDepartureGraceMs,
    leaderElect: values['leader-elect'] && !values['no-leader-elect'],
    leaderElectionNamespace: values['leader-election-namespace'],
    leaderElectionId: values['leader-election-id'],
    identity: values.identity,
    shards: count('shards', 0),
    workers,
    workloadQps: count('workload-qps', 0),
    workloadBurst: count('workload-burst', 1),
    maxConcurrentWrites: count('max-concurrent-writes', 1),
    inventory,
    clusterProfileSecretNamespaces: values['cluster-profile-secret-namespace'],
    clusterProfiles,
    clusterManagerName,
    logLevel,
    help: values.help,
  };
}

const DNS_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?\.)*[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** --zone: DNS names, none at, above or under another zone (one server, one owner per name). */
function zonesOf(values: readonly string[], taken: readonly string[]): string[] {
  const zones: string[] = [];
  for (const raw of values) {
    const zone = raw
      .trim()
      .toLowerCase()
      .replace(/^\.+|\.+$/g, '');
    if (!DNS_NAME.test(zone)) throw new Error(`--zone: not a DNS name: ${raw}`);
    const clash = [...taken, ...zones].find(
      (z) => z === zone || z.endsWith(`.${zone}`) || zone.endsWith(`.${z}`),
    );
    if (clash) throw new Error(`--zone ${zone}: overlaps ${clash} (one server, one owner per name)`);
    zones.push(zone);
  }
  return zones;
}
