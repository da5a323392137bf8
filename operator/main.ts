// capi-dns-controller: flags → components, nothing else.
import { KubeConfig } from '@kubernetes/client-node';
import { parseFlags, USAGE, type Flags } from './flags.js';
import { CorefileController } from './corefile/controller.js';
import { GatewayDnsController } from './gatewaydns/controller.js';
import { EventRecorder } from './runtime/events.js';
import { parseListen, startHealthServer } from '../process/health.js';
import { reuseConnections } from '../process/kube-connections.js';
import { fatalLine } from '../process/log.js';
import { stopOnSignals } from '../process/signals.js';
import { LeaderElector } from './runtime/leader.js';
import { createLogger, errorText } from './runtime/log.js';
import { Metrics } from './runtime/metrics.js';
import { removeAllMirrors } from './mirror/cleanup.js';
import { WriteGate } from './runtime/write-gate.js';
import { McsController } from './mcs/controller.js';
import { Sharder } from './sharding/sharder.js';

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

  const writeGate = new WriteGate({
    maxInFlight: flags.maxConcurrentWrites,
    maxInFlightPerCluster: WRITES_IN_FLIGHT_PER_CLUSTER,
    qps: flags.workloadQps,
    burst: flags.workloadBurst,
  });
  const metrics = new Metrics(writeGate);
  const events = new EventRecorder(kc, log, flags.identity);
  // The one-shot clean-up takes no lease: it is run with the operator scaled to zero (or it would
  // be waiting for the lease the running operator holds, which would then put the blocks back).
  const cleanup = flags.cleanupCorefiles || flags.cleanupMirrors;
  // Active-active (ADR 0207): each replica serves the namespaces of the shards whose Lease it holds.
  const sharder =
    flags.shards > 0 && !cleanup
      ? new Sharder({
          kc,
          namespace: flags.leaderElectionNamespace,
          identity: flags.identity,
          group: flags.leaderElectionId,
          shards: flags.shards,
          log,
        })
      : undefined;
  if (sharder) {
    metrics.shards = () => sharder.heldShards.length;
    sharder.onChange(() => (metrics.shardChanges += 1));
  }
  const controller = new GatewayDnsController({
    management: kc,
    namespace: flags.namespace,
    domainSuffix: flags.domainSuffix,
    recordsNamespace: flags.recordsNamespace,
    workers: flags.workers,
    kubeconfigPolicy: {
      allowExec: flags.insecureKubeconfigExec,
      allowInsecureTls: flags.insecureKubeconfigTls,
    },
    departedGraceMs: flags.pausedDepartureGraceMs,
    writeGate,
    events,
    metrics,
    log,
    share: sharder,
    userAgent,
  });
  const corefiles =
    flags.manageCorefiles || flags.cleanupCorefiles
      ? new CorefileController({
          clusters: controller.clusters,
          clusterObjects: controller.clusterObjects,
          zone: flags.domainSuffix,
          clusterset: { zone: flags.clustersetDomain, namespaces: controller.namespaces },
          recordsNamespace: flags.recordsNamespace,
          cleanup: flags.cleanupCorefiles,
          events,
          log,
          share: sharder,
        })
      : undefined;
  const elector =
    flags.leaderElect && !cleanup && !sharder
      ? new LeaderElector({
          kc,
          namespace: flags.leaderElectionNamespace,
          name: flags.leaderElectionId,
          identity: flags.identity,
          log,
        })
      : undefined;
  const health = await startHealthServer({
    ...parseListen(flags.healthListen),
    ready: () => (elector && !elector.leading ? elector.apiReachable : controller.synced),
    registry: metrics.registry,
  });
  log.info('started', { ...flags, kubeconfig: flags.kubeconfig ?? '(default)' });

  const stopping: (() => Promise<void>)[] = [];
  const shutdown = stopOnSignals(async () => {
    await Promise.all(
      stopping.map((stop) => stop().catch((err: unknown) => log.warn('stop failed', { error: err }))),
    );
    await corefiles?.stop().catch((err: unknown) => log.warn('stop failed', { error: err }));
    await controller.stop().catch((err: unknown) => log.warn('stop failed', { error: err }));
    // After the work stopped: the shards go to the others at once, with nothing of ours in flight.
    await sharder?.stop().catch((err: unknown) => log.warn('stop failed', { error: err }));
    await elector?.release();
    await health.close();
  }, log);

  if (elector) {
    await elector.run(() => shutdown('lost leadership', 1));
    metrics.leader = 1;
  }
  if (cleanup) {
    await controller.start({ reconcile: false });
    // Only a Corefile clean-up starts the Corefile controller here: --cleanup-mirrors alone must not add blocks.
    const corefileCleanup = flags.cleanupCorefiles ? corefiles : undefined;
    corefileCleanup?.start();
    const [corefilesFailing, mirrorsFailing] = await Promise.all([
      corefileCleanup ? corefileCleanup.settle(60_000) : new Map<string, string>(),
      flags.cleanupMirrors
        ? removeAllMirrors({
            clusters: controller.clusters,
            listClusters: () =>
              controller.clusterObjects
                .list()
                .map((c) => ({ namespace: c.metadata?.namespace ?? '', name: c.metadata?.name ?? '' })),
            log,
            timeoutMs: 60_000,
          })
        : new Map<string, string>(),
    ]);
    if (corefilesFailing.size)
      log.error('Corefile clean-up incomplete', { failing: Object.fromEntries(corefilesFailing) });
    else if (corefileCleanup) log.info('Corefile clean-up done');
    if (mirrorsFailing.size)
      log.error('mirror clean-up incomplete', { failing: Object.fromEntries(mirrorsFailing) });
    else if (flags.cleanupMirrors) log.info('mirror clean-up done');
    return shutdown('clean-up done', corefilesFailing.size || mirrorsFailing.size ? 1 : 0);
  }
  await controller.start();
  corefiles?.start();
  // Multi-Cluster Services: nothing happens until a management namespace opts in by its label.
  const mcs = new McsController({
    clusters: controller.clusters,
    clusterObjects: controller.clusterObjects,
    namespaces: controller.namespaces,
    writer: controller.writer,
    watches: controller.watches,
    workers: flags.workers,
    log,
    share: sharder,
  });
  mcs.start();
  stopping.push(() => mcs.stop());
  // Started once every controller listens: a shard gained enqueues from their synced caches.
  await sharder?.start();
  log.info('reconciling', {
    domainSuffix: flags.domainSuffix,
    recordsNamespace: flags.recordsNamespace,
    ...(sharder ? { shards: flags.shards } : {}),
  });
}

main().catch((err: unknown) => {
  process.stderr.write(fatalLine('capi-dns-controller', 'fatal', err));
  process.exit(1);
});
