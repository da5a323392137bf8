// capi-dns-controller: flags → components, nothing else.
import { KubeConfig } from '@kubernetes/client-node';
import { parseFlags, USAGE, type Flags } from './flags.js';
import { CorefileController } from './corefile/controller.js';
import { GatewayDnsController } from './gatewaydns/controller.js';
import { Manager } from './manager/manager.js';
import { McsController } from './mcs/controller.js';
import { ZoneController } from './zones/controller.js';
import { ProfileController } from './clusterprofiles/controller.js';
import { removeAllMirrors } from './gatewaydns/apply/mirror/cleanup.js';
import { parseListen, startHealthServer } from '../runtime/health.js';
import { reuseConnections } from '../runtime/kube-connections.js';
import { fatalLine } from '../runtime/log.js';
import { stopOnSignals } from '../runtime/signals.js';
import { createLogger, errorText } from './manager/runtime/log.js';

/**
 * Writes in flight to one workload cluster: enough to keep a connection busy, few enough that a
 * cluster with many changes leaves room for the others (the rate limit is --workload-qps).
 */
const WRITES_IN_FLIGHT_PER_CLUSTER = 4;

async function main(): Promise<void> {
  let flags: Flags;
  try {
    flags = parseFlags(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${errorText(err)}\n\n${USAGE}`);
    process.exit(2);
  }
  if (flags.help) {
    process.stdout.write(USAGE);
    return;
  }
  const log = createLogger(flags.logLevel, { component: 'capi-dns-controller' });
  const kc = new KubeConfig();
  if (flags.kubeconfig) kc.loadFromFile(flags.kubeconfig);
  else kc.loadFromDefault();
  // Each replica by name in the API servers' audit logs: which of several wrote what.
  const userAgent = `capi-dns-controller (${flags.identity})`;
  if (!reuseConnections(kc, { userAgent }))
    log.warn(
      'this @kubernetes/client-node has no createDispatcher: every API request opens a new connection',
    );

  // The one-shot clean-up takes no lease and runs no GatewayDNS or MCS controller: it is run with
  // the operator scaled to zero (or it would be waiting for the lease the running operator holds,
  // which would then put the blocks back).
  const cleanup = flags.cleanupCorefiles || flags.cleanupMirrors;
  const mgr = new Manager({
    management: kc,
    namespace: flags.namespace,
    recordsNamespace: flags.recordsNamespace,
    identity: flags.identity,
    userAgent,
    kubeconfigPolicy: {
      allowExec: flags.insecureKubeconfigExec,
      allowInsecureTls: flags.insecureKubeconfigTls,
    },
    writes: {
      maxInFlight: flags.maxConcurrentWrites,
      maxInFlightPerCluster: WRITES_IN_FLIGHT_PER_CLUSTER,
      qps: flags.workloadQps,
      burst: flags.workloadBurst,
    },
    // Active-active (ADR 0207): each replica serves the namespaces of the shards whose Lease it holds.
    sharding:
      flags.shards > 0 && !cleanup
        ? { namespace: flags.leaderElectionNamespace, group: flags.leaderElectionId, shards: flags.shards }
        : undefined,
    leaderElection:
      flags.leaderElect && !cleanup
        ? { namespace: flags.leaderElectionNamespace, name: flags.leaderElectionId }
        : undefined,
    departedGraceMs: flags.pausedDepartureGraceMs,
    inventory: flags.inventory,
    profileSecretNamespaces: flags.clusterProfileSecretNamespaces,
    clusterManager: flags.clusterManagerName,
    log,
  });
  if (!cleanup)
    mgr.add(
      new GatewayDnsController(mgr, {
        domainSuffix: flags.domainSuffix,
        zones: flags.zones,
        workers: flags.workers,
      }),
    );
  // DNSZones (ADR 0213): the delegations in force, which the GatewayDNS claims read.
  if (!cleanup)
    mgr.add(
      new ZoneController(mgr, {
        flagZones: [flags.domainSuffix, ...flags.zones],
        // Generated DNSSEC keys go to the operator's own namespace (the Deployment sets it).
        keyNamespace: process.env.POD_NAMESPACE ?? 'capi-dns-system',
      }),
    );
  // Only a Corefile clean-up starts the Corefile controller in a clean-up: --cleanup-mirrors alone must not add blocks.
  const corefiles =
    (flags.manageCorefiles && !cleanup) || flags.cleanupCorefiles
      ? new CorefileController(mgr, {
          zones: [flags.domainSuffix, ...flags.zones],
          clustersetZone: flags.clustersetDomain,
          cleanup: flags.cleanupCorefiles,
        })
      : undefined;
  if (corefiles) mgr.add(corefiles);
  // SIG Multicluster's cluster inventory (ADR 0214): each Cluster published as a ClusterProfile.
  if (!cleanup && flags.clusterProfiles === 'produce')
    mgr.add(new ProfileController(mgr, { clusterManager: flags.clusterManagerName }));
  // Multi-Cluster Services: nothing happens until a management namespace opts in by its label.
  if (!cleanup) mgr.add(new McsController(mgr, { workers: flags.workers }));

  const health = await startHealthServer({
    ...parseListen(flags.healthListen),
    ready: () => mgr.ready(),
    registry: mgr.metrics.registry,
  });
  log.info('started', { ...flags, kubeconfig: flags.kubeconfig ?? '(default)' });
  const shutdown = stopOnSignals(async () => {
    await mgr.stop();
    await health.close();
  }, log);

  await mgr.start(() => shutdown('lost leadership', 1));
  if (cleanup) {
    const [corefilesFailing, mirrorsFailing] = await Promise.all([
      corefiles ? corefiles.settle(60_000) : new Map<string, string>(),
      flags.cleanupMirrors
        ? removeAllMirrors({
            clusters: mgr.clusters,
            listClusters: () =>
              mgr.provider
                .list()
                .map((c) => ({ namespace: c.metadata?.namespace ?? '', name: c.metadata?.name ?? '' })),
            log,
            timeoutMs: 60_000,
          })
        : new Map<string, string>(),
    ]);
    if (corefilesFailing.size)
      log.error('Corefile clean-up incomplete', { failing: Object.fromEntries(corefilesFailing) });
    else if (corefiles) log.info('Corefile clean-up done');
    if (mirrorsFailing.size)
      log.error('mirror clean-up incomplete', { failing: Object.fromEntries(mirrorsFailing) });
    else if (flags.cleanupMirrors) log.info('mirror clean-up done');
    return shutdown('clean-up done', corefilesFailing.size || mirrorsFailing.size ? 1 : 0);
  }
  log.info('reconciling', {
    domainSuffix: flags.domainSuffix,
    recordsNamespace: flags.recordsNamespace,
    ...(flags.shards > 0 ? { shards: flags.shards } : {}),
  });
}

main().catch((err: unknown) => {
  process.stderr.write(fatalLine('capi-dns-controller', 'fatal', err));
  process.exit(1);
});
