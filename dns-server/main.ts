// dns-server: flags → components, nothing else.
import { parseFlags, usage, UsageError, type Config } from './flags.js';
import { startHttp } from './http.js';
import { jsonLogger } from './log.js';
import { Metrics } from './metrics.js';
import { DnsServer } from './server.js';
import { FileSource } from './sources/file.js';
import { RecordStore } from './store.js';
import { Responder } from './wire/responder.js';

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
  const log = jsonLogger(config.logLevel, { component: 'dns-server' });
  const metrics = new Metrics();
  const responder = new Responder({ maxUdpSize: config.maxUdpSize });
  const store = new RecordStore(config.zones, (zones) => responder.load(zones), metrics, log, {
    debounceMs: config.debounceMs,
  });
  // Serve SOA/NS (and REFUSED/NXDOMAIN) from the first moment; /readyz says when records are in.
  store.rebuild();
  const onRecords = (source: string, sets: Parameters<typeof store.replace>[1]) =>
    store.replace(source, sets);
  const onError = () => void metrics.reloadErrors++;

  const stops: (() => void | Promise<void>)[] = [];
  if (config.recordsFile) {
    const file = new FileSource({
      path: config.recordsFile,
      pollMs: config.filePollMs,
      onRecords,
      onError,
      log,
    });
    store.expect(file.name);
    await file.start();
    stops.push(() => file.stop());
  }
  if (config.kubernetes) {
    // Loaded only in Kubernetes mode: the client library alone costs tens of megabytes resident.
    const { KubeConfig } = await import('@kubernetes/client-node');
    const { KubernetesSource } = await import('./sources/kubernetes.js');
    const kc = new KubeConfig();
    if (config.kubernetes.kubeconfig) kc.loadFromFile(config.kubernetes.kubeconfig);
    else kc.loadFromCluster();
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
    k8s.start();
    stops.push(() => k8s.stop());
  }

  const server = new DnsServer(
    {
      host: config.listen.host,
      port: config.listen.port,
      tcpIdleMs: config.tcpIdleMs,
      tcpMaxConnections: config.tcpMaxConnections,
      logQueries: config.logQueries,
    },
    responder,
    metrics,
    log,
  );
  const port = await server.start();
  stops.push(() => server.stop());
  let healthPort: number | undefined;
  if (config.healthListen) {
    const http = await startHttp(
      config.healthListen.host,
      config.healthListen.port,
      () => store.ready,
      metrics,
    );
    healthPort = http.port;
    stops.push(() => new Promise<void>((resolve) => http.server.close(() => resolve())));
  }
  log.info('serving', {
    listen: `${config.listen.host}:${port}`,
    healthListen: healthPort === undefined ? undefined : `${config.healthListen!.host}:${healthPort}`,
    zones: config.zones.map((z) => z.name),
    recordsFile: config.recordsFile,
    namespace: config.kubernetes?.namespace,
  });

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('stopping', { signal });
    store.stop();
    void Promise.all(stops.map((s) => s())).finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 3000).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(
    `${JSON.stringify({ time: new Date().toISOString(), level: 'error', msg: 'dns-server failed to start', component: 'dns-server', error: err instanceof Error ? err.message : String(err) })}\n`,
  );
  process.exit(1);
});
