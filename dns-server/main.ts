// dns-server: flags → components, nothing else. With --workers N the first
// process runs the sources, the builds and HTTP, and N cluster workers share
// the UDP and TCP sockets and answer from the data it sends them.
import cluster from 'node:cluster';
import { BuildHeapLimitError, inProcessBuilder, WorkerBuilder, type Builder } from './build/builder.js';
import { parseFlags, usage, UsageError, type Config } from './flags.js';
import { startHealthServer } from '../process/health.js';
import { createLogger, fatalLine, type Logger } from '../process/log.js';
import { stopOnSignals } from '../process/signals.js';
import type { FromAnswerer, ToAnswerer } from './serve/messages.js';
import { Metrics } from './serve/metrics.js';
import { DnsServer } from './serve/server.js';
import { FileSource } from './sources/file.js';
import { RecordStore } from './store/record-store.js';
import { Responder } from './wire/responder.js';
import type { ServedData } from './wire/served.js';
import { Prober } from './health/prober.js';
import { ProbeReportWriter, reportOf } from './health/report.js';

/**
 * Health-check probes in flight at once: 100 GatewayDNS with checks of two addresses each, every
 * 2 s, keep about 100 probes a second; each takes a socket for at most its timeout.
 */
const PROBES_IN_FLIGHT = 64;

async function main(argv: string[]): Promise<void> {
  let config: Config | undefined;
  try {
    config = parseFlags(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n\n${usage()}`);
    process.exit(2);
  }
  if (!config) {
    process.stdout.write(usage());
    return;
  }
  if (cluster.isWorker) return answerer(config);
  const log = createLogger(config.logLevel, { component: 'dns-server' });
  const metrics = new Metrics();
  const responder = new Responder({ maxUdpSize: config.maxUdpSize });
  const multi = config.workers > 1;
  let lastServed: ServedData | undefined;
  const load = (served: ServedData) => {
    if (!multi) return responder.loadServed(served);
    lastServed = served;
    for (const w of Object.values(cluster.workers ?? {}))
      w?.send({ type: 'served', served } satisfies ToAnswerer);
  };
  const builds = new WorkerBuilder(
    { idleMs: config.buildWorkerIdleMs, heapLimitMiB: config.buildHeapLimitMiB },
    log,
  );
  // The traffic policies' health checks, made from this cluster; their view chooses the answers.
  // Set in Kubernetes mode with --pod-name: the view told to the operator, for people to see.
  let reporter: ProbeReportWriter | undefined;
  const report = () => reporter?.update(reportOf(prober.stats.targets, prober.unhealthyTargets()));
  const prober = new Prober({
    maxInFlight: PROBES_IN_FLIGHT,
    onChange: (unhealthy) => {
      store.setUnhealthy(unhealthy);
      report();
    },
    log,
  });
  metrics.probes = () => prober.stats;
  const store = new RecordStore(config.zones, load, metrics, log, {
    debounceMs: config.debounceMs,
    builder: fallingBack(builds, log),
    onPolicies: (targets, tiers) => {
      prober.setTargets(targets);
      metrics.answeringTiers = tiers;
      report();
    },
  });
  const onRecords = (source: string, sets: Parameters<typeof store.replace>[1]) =>
    store.replace(source, sets);
  const onError = () => void metrics.reloadErrors++;

  const stops: (() => void | Promise<void>)[] = [() => builds.close(), () => prober.stop()];
  const starts: (() => void | Promise<void>)[] = [];
  if (config.recordsFile) {
    const file = new FileSource({
      path: config.recordsFile,
      pollMs: config.filePollMs,
      onText: (source, yaml) => store.replaceYaml(source, yaml),
      onError,
      log,
    });
    store.expect(file.name);
    starts.push(() => file.start());
    stops.push(() => file.stop());
  }
  if (config.kubernetes) {
    // Loaded only in Kubernetes mode: the client library alone costs tens of megabytes resident.
    const { KubeConfig } = await import('@kubernetes/client-node');
    const { KubernetesSource } = await import('./sources/kubernetes.js');
    const kc = new KubeConfig();
    if (config.kubernetes.kubeconfig) kc.loadFromFile(config.kubernetes.kubeconfig);
    else kc.loadFromCluster();
    const { reuseConnections } = await import('../process/kube-connections.js');
    reuseConnections(kc);
    const k8s = new KubernetesSource({
      kubeConfig: kc,
      namespace: config.kubernetes.namespace,
      resyncMs: config.kubernetes.resyncMs,
      backoffMinMs: 200,
      backoffMaxMs: 5000,
      onRecords,
      onError,
      log,
    });
    store.expect(k8s.name);
    starts.push(() => k8s.start());
    stops.push(() => k8s.stop());
    // Zones declared once on the management cluster (DNSZone), beside the flags' (ADR 0212).
    const { ZoneDeclarationSource } = await import('./sources/zones.js');
    const { servedZones } = await import('./zone/declared.js');
    const declared = new ZoneDeclarationSource({
      kubeConfig: kc,
      namespace: config.kubernetes.namespace,
      resyncMs: config.kubernetes.resyncMs,
      backoffMinMs: 200,
      backoffMaxMs: 5000,
      onZones: (zones) => {
        const served = servedZones(config.zones, zones, config.zoneDefaults);
        if (served.ignored.length)
          log.warn('declared zones left out: a --zone serves them or overlaps them', {
            zones: served.ignored,
          });
        store.setZones(served.zones);
      },
      onError,
      log,
    });
    starts.push(() => declared.start());
    stops.push(() => declared.stop());
    const pod = config.kubernetes.pod;
    if (pod) {
      const { KubernetesObjectApi, PatchStrategy } = await import('@kubernetes/client-node');
      const objects = KubernetesObjectApi.makeApiClient(kc);
      reporter = new ProbeReportWriter({
        pod: { namespace: config.kubernetes.namespace, ...pod },
        apply: async (configMap) => {
          await objects.patch(
            configMap,
            undefined,
            undefined,
            'capi-dns-server',
            true,
            PatchStrategy.ServerSideApply,
          );
        },
        log,
      });
      const written = reporter;
      stops.push(() => written.stop());
    }
    const clustersetDomain = config.kubernetes.clustersetDomain;
    if (clustersetDomain) {
      const { ClustersetSource } = await import('./sources/clusterset.js');
      const clusterset = new ClustersetSource({
        kubeConfig: kc,
        zone: clustersetDomain,
        resyncMs: config.kubernetes.resyncMs,
        backoffMinMs: 200,
        backoffMaxMs: 5000,
        onRecords,
        onError,
        log,
      });
      store.expect(clusterset.name);
      starts.push(() => clusterset.start());
      stops.push(() => clusterset.stop());
    }
  }

  // Serve SOA/NS (and REFUSED/NXDOMAIN) from the first moment, the sources declared (so that this
  // build does not count as ready); /readyz says when records are in. The records are built in a
  // worker thread while the server answers.
  await store.rebuild();
  for (const start of starts) await start();

  let port: number;
  if (multi) {
    port = await forkAnswerers(config.workers, () => lastServed!, metrics, log, stops);
  } else {
    const server = dnsServer(config, responder, metrics, log);
    port = await server.start();
    stops.push(() => server.stop());
  }
  let healthPort: number | undefined;
  // Set by SIGTERM: /readyz fails while answering goes on (--lameduck).
  let lameDuck = false;
  if (config.healthListen) {
    const health = await startHealthServer({
      ...config.healthListen,
      // Ready once every source delivered once and the zones are built from it.
      ready: () => store.ready && !lameDuck,
      notReadyText: 'waiting for the first sync\n',
      registry: metrics.registry,
    });
    healthPort = health.port;
    stops.push(() => health.close());
  }
  log.info('serving', {
    listen: `${config.listen.host}:${port}`,
    healthListen: healthPort === undefined ? undefined : `${config.healthListen!.host}:${healthPort}`,
    zones: config.zones.map((z) => z.name),
    workers: config.workers,
    recordsFile: config.recordsFile,
    namespace: config.kubernetes?.namespace,
  });

  stopOnSignals(
    async () => {
      store.stop();
      await Promise.all(stops.map((s) => s()));
    },
    log,
    3000,
    { ms: config.lameDuckMs, begin: () => (lameDuck = true) },
  );
}

function dnsServer(config: Config, responder: Responder, metrics: Metrics, log: Logger): DnsServer {
  return new DnsServer(
    {
      host: config.listen.host,
      port: config.listen.port,
      tcp: config.tcp,
      logQueries: config.logQueries,
    },
    responder,
    metrics,
    log,
  );
}

/** Builds in a worker thread; in this thread if a worker cannot be started. */
function fallingBack(builds: WorkerBuilder, log: Logger): Builder {
  const inProcess = inProcessBuilder();
  return async (req) => {
    try {
      return await builds.build(req);
    } catch (err) {
      // The same build in the main thread would take the same memory, without a limit but the pod's.
      if (err instanceof BuildHeapLimitError) throw err;
      log.warn('build worker failed; building in the main thread', { error: err });
      return inProcess(req);
    }
  };
}

/**
 * Forks the answering processes; each gets the current data before it binds the shared sockets
 * (the first one picks the port when asked for port 0, the others get the same handle). A process
 * that dies is replaced. Resolves with the port once all listen.
 */
async function forkAnswerers(
  count: number,
  current: () => ServedData,
  metrics: Metrics,
  log: Logger,
  stops: (() => void | Promise<void>)[],
): Promise<number> {
  cluster.setupPrimary({ serialization: 'advanced' });
  let stopping = false;
  const fork = (onPort?: (port: number) => void) => {
    const worker = cluster.fork();
    worker.on('message', (msg: FromAnswerer) => {
      // Asked for once it listens for messages (a message sent before that would be lost).
      if (msg.type === 'want-data') worker.send({ type: 'served', served: current() } satisfies ToAnswerer);
      else if (msg.type === 'listening') onPort?.(msg.port);
      else if (msg.type === 'counters') metrics.setPeer(worker.id, msg.counters);
    });
    worker.on('exit', (code, signal) => {
      if (stopping) return;
      log.error('answering process exited; starting another', { code, signal });
      setTimeout(() => fork(), 1000);
    });
  };
  stops.push(() => {
    stopping = true;
    for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGTERM');
  });
  // One first, so that a port 0 is chosen once; then the others on the same handles.
  const port = await new Promise<number>((resolve) => fork(resolve));
  await Promise.all(Array.from({ length: count - 1 }, () => new Promise<number>((resolve) => fork(resolve))));
  return port;
}

/** A cluster worker: answers on the shared sockets from the data the primary sends. */
async function answerer(config: Config): Promise<void> {
  const log = createLogger(config.logLevel, { component: 'dns-server', worker: cluster.worker!.id });
  // Counts only: the primary publishes them with its own on /metrics.
  const metrics = new Metrics({ serve: false });
  const responder = new Responder({ maxUdpSize: config.maxUdpSize });
  await new Promise<void>((resolve) => {
    process.on('message', (msg: ToAnswerer) => {
      if (msg.type !== 'served') return;
      responder.loadServed(msg.served);
      resolve();
    });
    process.send!({ type: 'want-data' } satisfies FromAnswerer);
  });
  const server = dnsServer(config, responder, metrics, log);
  const port = await server.start();
  process.send!({ type: 'listening', port } satisfies FromAnswerer);
  setInterval(
    () => process.send!({ type: 'counters', counters: metrics.counters() } satisfies FromAnswerer),
    1000,
  ).unref();
  stopOnSignals(() => server.stop(), log, 3000);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(fatalLine('dns-server', 'dns-server failed to start', err));
  process.exit(1);
});
