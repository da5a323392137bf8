// Where the queries are answered: by this process (one DnsServer), or, with
// --workers N, by N answering processes on the shared sockets
// (answering-processes.ts). Either way the store hands each new build to load.
import type { Logger } from '../../runtime/log.js';
import type { Runnable } from '../../runtime/manager.js';
import { Responder, type ResponderOptions } from '../wire/responder.js';
import { signedQueries } from '../transfer/signed-queries.js';
import type { ServedData } from '../wire/served.js';
import type { ArenaPages } from '../wire/arena-memory.js';
import type { Metrics } from './metrics.js';
import { DnsServer, type ServerOptions } from './server.js';
import { TransferServer, type TransferOptions } from '../transfer/transfer-server.js';
import type { TransferMetrics } from '../transfer/metrics.js';

export interface AnsweringOptions {
  server: ServerOptions;
  /** Largest UDP response whatever EDNS offers (--max-udp-size). */
  maxUdpSize: number;
  /** Answering processes; 1: this process alone. */
  workers: number;
  /** Zone transfers offered (TSIG keys, bounds); none when unset. */
  transfer?: TransferOptions;
}

/** The responder's options: with transfers, queries signed with TSIG get signed answers. */
export function responderOptions(opts: AnsweringOptions): ResponderOptions {
  return {
    maxUdpSize: opts.maxUdpSize,
    signed: opts.transfer && signedQueries(opts.transfer.keys),
  };
}

/** The transfer server of a process that answers TCP, if transfers are offered. */
export function transferServerOf(
  opts: AnsweringOptions,
  log: Logger,
  metrics?: TransferMetrics,
): TransferServer | undefined {
  if (!opts.transfer) return undefined;
  return new TransferServer(opts.transfer, {
    log,
    onResult: (zone, result, secondary, serial) => metrics?.transfer(zone, result, secondary, serial),
  });
}

/**
 * Says where a build's arena is (arena-memory.ts) when that changes: advised for huge pages, or why
 * not (a warning: DO=1 answers of a large signed zone are then slower). Returns what it saw.
 */
export function sayArenaPages(log: Logger, said: ArenaPages | undefined, served: ServedData): ArenaPages {
  const pages = served.arenaPages;
  if (pages !== said && pages !== 'small') {
    const fields = { pages, arenaOctets: served.arena.length };
    if (pages === 'advised') log.info('answer arena advised for huge pages', fields);
    else log.warn('answer arena on ordinary pages', fields);
  }
  return pages;
}

export interface Answering extends Runnable {
  /** The port the DNS sockets are bound to, once started. */
  readonly port: number | undefined;
  /** A new build's answers, served from now on. */
  load(served: ServedData): void;
}

/** Answers in this process. */
export class InProcessAnswering implements Answering {
  readonly name = 'dns';
  port: number | undefined;
  private readonly responder: Responder;
  private readonly server: DnsServer;
  private readonly transfers: TransferServer | undefined;
  private arenaPages: ArenaPages | undefined;

  constructor(
    opts: AnsweringOptions,
    metrics: Metrics,
    private readonly log: Logger,
    transferMetrics?: TransferMetrics,
  ) {
    this.responder = new Responder(responderOptions(opts));
    this.transfers = transferServerOf(opts, log, transferMetrics);
    this.server = new DnsServer(opts.server, this.responder, metrics, log, this.transfers);
  }

  load(served: ServedData): void {
    this.arenaPages = sayArenaPages(this.log, this.arenaPages, served);
    this.responder.loadServed(served);
    this.transfers?.load(served.transfer ?? []);
  }

  async start(): Promise<void> {
    this.port = await this.server.start();
  }

  stop(): Promise<void> {
    return this.server.stop();
  }
}
