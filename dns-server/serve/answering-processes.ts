// --workers N: N answering processes (the cluster module) share the UDP and
// TCP sockets and answer from the data the first process sends them
// (messages.ts); the first process runs the sources, the builds and HTTP.
import cluster from 'node:cluster';
import type { Logger } from '../../runtime/log.js';
import { stopOnSignals } from '../../runtime/signals.js';
import { HMAC_SHA256, type TsigKey } from '../transfer/tsig.js';
import type { TsigKeyRing } from '../transfer/key-ring.js';
import { Responder } from '../wire/responder.js';
import type { ServedData } from '../wire/served.js';
import { placeArena, type ArenaPages } from '../wire/arena-memory.js';
import {
  responderOptions,
  sayArenaPages,
  transferServerOf,
  type Answering,
  type AnsweringOptions,
} from './answering.js';
import type { FromAnswerer, ToAnswerer } from './messages.js';
import { Metrics } from './metrics.js';
import { DnsServer } from './server.js';

/** An answering process that exits is replaced after this long. */
const REPLACE_AFTER_MS = 1000;

/**
 * The first process's side: forks the answering processes, sends each the current data before it
 * binds the shared sockets (the first one picks the port when asked for port 0, the others get the
 * same handle) and every build after, and replaces one that dies.
 */
export class AnsweringProcesses implements Answering {
  readonly name = 'answering-processes';
  port: number | undefined;
  /** The last build; the store builds once before the processes are forked. */
  private served: ServedData | undefined;
  /** The declared TSIG keys as last sent (sent again to a process that starts). */
  private keys: ToAnswerer | undefined;

  constructor(
    private readonly opts: AnsweringOptions,
    private readonly metrics: Metrics,
    private readonly log: Logger,
  ) {}

  /** The TSIG keys of the zones declared with transfer: each process's key ring takes them. */
  setDeclaredKeys(keys: readonly TsigKey[]): void {
    this.keys = {
      type: 'keys',
      keys: keys.map((k) => ({ name: k.name, secret: k.secret.toString('base64') })),
    };
    for (const w of Object.values(cluster.workers ?? {})) w?.send(this.keys);
  }

  load(served: ServedData): void {
    this.served = served;
    for (const w of Object.values(cluster.workers ?? {}))
      w?.send({ type: 'served', served } satisfies ToAnswerer);
  }

  /** Resolves once all listen. */
  async start(stopping: AbortSignal): Promise<void> {
    cluster.setupPrimary({ serialization: 'advanced' });
    // One first, so that a port 0 is chosen once; then the others on the same handles.
    this.port = await new Promise<number>((resolve) => this.fork(stopping, resolve));
    await Promise.all(
      Array.from(
        { length: this.opts.workers - 1 },
        () => new Promise<number>((resolve) => this.fork(stopping, resolve)),
      ),
    );
  }

  stop(): void {
    for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGTERM');
  }

  private fork(stopping: AbortSignal, onPort?: (port: number) => void): void {
    const worker = cluster.fork();
    worker.on('message', (msg: FromAnswerer) => {
      // Asked for once it listens for messages (a message sent before that would be lost).
      if (msg.type === 'want-data' && this.served) {
        // The keys first: a zone with transfer arrives with its key.
        if (this.keys) worker.send(this.keys);
        worker.send({ type: 'served', served: this.served } satisfies ToAnswerer);
      } else if (msg.type === 'listening') onPort?.(msg.port);
      else if (msg.type === 'counters') this.metrics.setPeer(worker.id, msg.counters);
    });
    worker.on('exit', (code, signal) => {
      if (stopping.aborted) return;
      this.log.error('answering process exited; starting another', { code, signal });
      setTimeout(() => this.fork(stopping), REPLACE_AFTER_MS);
    });
  }
}

/** An answering process's side: answers on the shared sockets from the data the first process sends. */
export async function answerInThisProcess(
  opts: AnsweringOptions,
  log: Logger,
  ring?: TsigKeyRing,
): Promise<void> {
  // Counts only: the first process publishes them with its own on /metrics.
  const metrics = new Metrics({ serve: false });
  const responder = new Responder(responderOptions(opts));
  const transfers = transferServerOf(opts, log);
  let arenaPages: ArenaPages | undefined;
  await new Promise<void>((resolve) => {
    process.on('message', (msg: ToAnswerer) => {
      if (msg.type === 'keys')
        ring?.setDeclared(
          msg.keys.map((k) => ({
            name: k.name,
            algorithm: HMAC_SHA256,
            secret: Buffer.from(k.secret, 'base64'),
          })),
        );
      if (msg.type !== 'served') return;
      // The message's copy of the arena is ordinary memory: placed again, as the build thread placed it.
      const { arena, pages } = placeArena(msg.served.arena);
      const served = { ...msg.served, arena, arenaPages: pages };
      arenaPages = sayArenaPages(log, arenaPages, served);
      responder.loadServed(served);
      transfers?.load(msg.served.transfer ?? []);
      resolve();
    });
    process.send!({ type: 'want-data' } satisfies FromAnswerer);
  });
  const server = new DnsServer(opts.server, responder, metrics, log, transfers);
  const port = await server.start();
  process.send!({ type: 'listening', port } satisfies FromAnswerer);
  setInterval(
    () => process.send!({ type: 'counters', counters: metrics.counters() } satisfies FromAnswerer),
    1000,
  ).unref();
  stopOnSignals(() => server.stop(), log, 3000);
}
