// dns-server: flags → manager → components → start, nothing else. With
// --workers N the first process runs the sources, the builds and HTTP, and N
// answering processes share the UDP and TCP sockets and answer from the data
// it sends them (serve/answering-processes.ts).
import cluster from 'node:cluster';
import { fallingBack, WorkerBuilder } from './build/builder.js';
import { UsageError } from './flag-values.js';
import { parseFlags, usage, type Config } from './flags.js';
import { Prober } from './health/prober.js';
import { probeReportWriter, serialReportWriter } from './health/report-apply.js';
import { reportOf } from './health/report.js';
import { HealthEndpoint } from '../runtime/health.js';
import { createLogger, fatalLine } from '../runtime/log.js';
import { Manager } from '../runtime/manager.js';
import { InProcessAnswering, type AnsweringOptions } from './serve/answering.js';
import { AnsweringProcesses, answerInThisProcess } from './serve/answering-processes.js';
import { Metrics } from './serve/metrics.js';
import { kubeConfigOf, sourcesFor } from './sources/sources.js';
import { RecordStore } from './store/record-store.js';
import { keysOf } from './transfer/flags.js';
import { TsigKeyRing } from './transfer/key-ring.js';
import { TransferMetrics } from './transfer/metrics.js';
import { Notifier } from './transfer/notify.js';

/**
 * Health-check probes in flight at once: 100 GatewayDNS with checks of two addresses each, every
 * 2 s, keep about 100 probes a second; each takes a socket for at most its timeout.
 */
const PROBES_IN_FLIGHT = 64;

async function main(argv: string[]): Promise<void> {
  const config = configOrExit(argv);
  if (!config) return;
  if (cluster.isWorker) {
    const log = createLogger(config.logLevel, { component: 'dns-server', worker: cluster.worker!.id });
    const ring = keyRingOf(config);
    return answerInThisProcess(answeringOptions(config, ring), log, ring);
  }
  const log = createLogger(config.logLevel, { component: 'dns-server' });
  const metrics = new Metrics();
  const mgr = new Manager(log);
  const kc = config.kubernetes ? await kubeConfigOf(config.kubernetes.kubeconfig) : undefined;

  const builds = mgr.add(
    new WorkerBuilder({ idleMs: config.buildWorkerIdleMs, heapLimitMiB: config.buildHeapLimitMiB }, log),
  );
  // The traffic policies' health checks, made from this cluster; their view chooses the answers.
  // In Kubernetes mode with --pod-name the view is also told to the operator, for people to see.
  const pod = config.kubernetes?.pod && { namespace: config.kubernetes.namespace, ...config.kubernetes.pod };
  const reporter = kc && pod ? mgr.add(await probeReportWriter(kc, pod, log)) : undefined;
  // The serial each declared zone is served at, for DNSZone status.nameservers[] (ADR 0215).
  const serials = kc && pod ? mgr.add(await serialReportWriter(kc, pod, log)) : undefined;
  const report = () => reporter?.update(reportOf(prober.stats.targets, prober.unhealthyTargets()));
  const prober = mgr.add(
    new Prober({
      maxInFlight: PROBES_IN_FLIGHT,
      onChange: (unhealthy) => {
        store.setUnhealthy(unhealthy);
        report();
      },
      log,
    }),
  );
  metrics.probes = () => prober.stats;

  // Zone transfers: NOTIFY from this process at every serial change; AXFR and IXFR where TCP is answered.
  const ring = keyRingOf(config);
  const transferMetrics = ring ? new TransferMetrics() : undefined;
  transferMetrics?.register(metrics.registry);
  const notifier = ring
    ? new Notifier({
        keys: ring.keys,
        sourceAddress: config.listen.host,
        log,
        onResult: (zone, secondary, result) => transferMetrics?.notify(zone, secondary, result),
      })
    : undefined;
  const answering =
    config.workers > 1
      ? new AnsweringProcesses(answeringOptions(config, ring), metrics, log)
      : new InProcessAnswering(answeringOptions(config, ring), metrics, log, transferMetrics);
  // Started before the store, so that the first build already signs (ADR 0106).
  if (config.dnssecKeyFiles.length > 0) {
    const { KeyFileSource } = await import('./sources/key-files.js');
    mgr.add(
      new KeyFileSource({
        files: config.dnssecKeyFiles,
        pollMs: config.filePollMs,
        onKeys: (keys) => store.setKeys('files', keys),
        onError: () => void metrics.reloadErrors++,
        log,
      }),
    );
  }
  // Started before the sources: SOA and NS are served from the first moment (in a worker thread).
  const store = mgr.add(
    new RecordStore(
      config.zones,
      (served, serial) => {
        answering.load(served);
        serials?.loaded(
          served.zones.map((z) => z.name),
          serial,
        );
        transferMetrics?.loaded(served.transfer ?? []);
        notifier?.changed(served.transfer ?? []);
      },
      metrics,
      log,
      {
        debounceMs: config.debounceMs,
        builder: fallingBack(builds, log),
        onPolicies: (targets, tiers) => {
          prober.setTargets(targets);
          metrics.answeringTiers = tiers;
          report();
        },
      },
    ),
  );
  const sources = await sourcesFor(config, kc, {
    onRecords: (source, sets) => store.replace(source, sets),
    onText: (source, yaml) => store.replaceYaml(source, yaml),
    onError: () => void metrics.reloadErrors++,
    log,
  });
  for (const source of sources) store.expect(mgr.add(source).name);
  // Zones declared once on the management cluster (DNSZone; ADR 0213), served beside the flags'.
  if (kc && config.kubernetes) {
    const { ZoneDeclarationSource } = await import('./sources/zones.js');
    const { zoneKeySource } = await import('./sources/zone-keys.js');
    const keys = mgr.add(
      zoneKeySource({
        kubeConfig: kc,
        namespace: config.kubernetes.namespace,
        resyncMs: config.kubernetes.resyncMs,
        onKeys: (byZone) =>
          store.setKeys(
            'declared',
            [...byZone].map(([zone, pem]) => ({ zone, pem })),
          ),
        onError: () => void metrics.reloadErrors++,
        log,
      }),
    );
    // The TSIG keys of the zones declared with transfer (ADR 0216): every process's ring, then the zones.
    const { tsigKeySource } = await import('./sources/tsig-keys.js');
    const tsigKeys = mgr.add(
      tsigKeySource({
        kubeConfig: kc,
        namespace: config.kubernetes.namespace,
        resyncMs: config.kubernetes.resyncMs,
        onKeys: (byZone) => {
          const declaredKeys = [...byZone.values()];
          ring?.setDeclared(declaredKeys);
          if (answering instanceof AnsweringProcesses) answering.setDeclaredKeys(declaredKeys);
          declarations.setKeyNames(new Map([...byZone].map(([zone, k]) => [zone, k.name])));
        },
        onError: () => void metrics.reloadErrors++,
        log,
      }),
    );
    const declarations = mgr.add(
      new ZoneDeclarationSource({
        kubeConfig: kc,
        namespace: config.kubernetes.namespace,
        resyncMs: config.kubernetes.resyncMs,
        backoffMinMs: 200,
        backoffMaxMs: 5000,
        flagZones: config.zones,
        defaults: config.zoneDefaults,
        onZones: (zones) => store.setZones(zones),
        onDeclared: (declared) => {
          serials?.setDeclared(declared.map((z) => z.name));
          keys.setDeclared(declared);
          tsigKeys.setDeclared(declared);
        },
        onError: () => void metrics.reloadErrors++,
        log,
      }),
    );
  }
  mgr.add(answering);
  if (notifier) mgr.add(notifier);
  // Ready once every source delivered once and the zones are built from it, until SIGTERM (--lameduck).
  const health = config.healthListen
    ? mgr.add(
        new HealthEndpoint({
          ...config.healthListen,
          ready: () => mgr.ready(),
          notReadyText: 'waiting for the first sync\n',
          registry: metrics.registry,
        }),
      )
    : undefined;

  await mgr.start();
  log.info('serving', {
    listen: `${config.listen.host}:${answering.port}`,
    healthListen: health ? `${config.healthListen!.host}:${health.port}` : undefined,
    zones: config.zones.map((z) => z.name),
    workers: config.workers,
    recordsFile: config.recordsFile,
    namespace: config.kubernetes?.namespace,
  });
  mgr.stopOnSignals({ graceMs: 3000, lameDuckMs: config.lameDuckMs });
}

/** The flags' configuration; undefined after --help; usage and exit 2 when they are wrong. */
function configOrExit(argv: string[]): Config | undefined {
  try {
    const config = parseFlags(argv);
    if (!config) process.stdout.write(usage());
    return config;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n\n${usage()}`);
    process.exit(2);
  }
}

/**
 * The TSIG keys of this process: --tsig-key-file's, and in Kubernetes mode those of the zones
 * declared with transfer (ADR 0216, read at run time); no transfers offered without either.
 */
function keyRingOf(config: Config): TsigKeyRing | undefined {
  if (!config.transfer && !config.kubernetes) return undefined;
  return new TsigKeyRing(config.transfer ? keysOf(config.transfer.keyFile) : []);
}

function answeringOptions(config: Config, ring: TsigKeyRing | undefined): AnsweringOptions {
  const { listen, tcp, logQueries, maxUdpSize, workers, udpIo, transferBounds, rateLimit } = config;
  return {
    server: { host: listen.host, port: listen.port, tcp, logQueries, udpIo, maxUdpSize, rateLimit },
    maxUdpSize,
    workers,
    transfer: ring && {
      keys: ring.keys,
      maxConcurrent: transferBounds.maxConcurrent,
      journalOctets: transferBounds.journalOctets,
    },
  };
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(fatalLine('dns-server', 'dns-server failed to start', err));
  process.exit(1);
});
