// DNS over UDP and TCP on one address (RFC 1035 section 4.2, RFC 7766).
// Everything here is transport: the answers come from the Responder.
import dgram from 'node:dgram';
import net from 'node:net';
import type { Logger } from '../../runtime/log.js';
import type { Metrics } from './metrics.js';
import { Decision, type Outcome, type Responder } from '../wire/responder.js';
import { TcpConnections, type TcpLimits } from './tcp-connections.js';
import { errnoName, loadNativeModule } from '../native/module.js';
import { BatchedUdp, SLOTS, STAT } from './native-udp.js';
import type { TransferServer } from '../transfer/transfer-server.js';
import {
  ResponseRateLimiter,
  DEFAULT_RATE_LIMIT,
  SEND,
  SLIP,
  truncateInPlace,
  type RateLimitOptions,
} from './rate-limit.js';

export interface ServerOptions {
  /** An address, or '' for every address of both families (IPv4 only where the host has no IPv6). */
  host: string;
  port: number;
  tcp: TcpLimits;
  /** Log every query (debug aid; off by default). */
  logQueries: boolean;
  /**
   * UDP through the batched native module (recvmmsg/sendmmsg, docs/adr/0105), or Node's dgram
   * (one system call each way per datagram). 'native' falls back to dgram, said once in the log,
   * where the module cannot load.
   */
  udpIo: 'native' | 'dgram';
  /** Octets of the largest UDP response (--max-udp-size): the size of an output slot. */
  maxUdpSize: number;
  /** Response rate limiting of UDP answers (rate-limit.ts); none when unset or at 0 per second. */
  rateLimit?: RateLimitOptions;
}

/** Why the native path is not taken, logged once per process rather than once per socket. */
let fallbackSaid = false;
/** How often the batched path's send errors are looked at and logged (when there were any). */
const SEND_ERRORS_LOG_MS = 1000;

/** Errors that say the host has no IPv6 (disabled in the kernel or in the network namespace). */
const NO_IPV6 = new Set(['EAFNOSUPPORT', 'EADDRNOTAVAIL', 'EPROTONOSUPPORT']);

export class DnsServer {
  private udp: dgram.Socket | undefined;
  private batched: BatchedUdp | undefined;
  private batchedErrors: NodeJS.Timeout | undefined;
  private tcp: net.Server | undefined;
  private readonly connections: TcpConnections;
  private failures = 0;
  /** When the last answer was made (performance.now()): in a batch, when the next one begins. */
  private answered = 0;
  /** The address both sockets are bound to: opts.host, or for '' the dual-stack or IPv4 wildcard. */
  private host: string;
  private readonly rateLimit: ResponseRateLimiter;

  constructor(
    private readonly opts: ServerOptions,
    private readonly responder: Responder,
    private readonly metrics: Metrics,
    private readonly log: Logger,
    /** Zone transfers (AXFR, IXFR), over TCP only (RFC 5936 section 4.2); over UDP the responder refuses them. */
    private readonly transfers?: TransferServer,
  ) {
    this.host = opts.host;
    this.connections = new TcpConnections({
      limits: opts.tcp,
      answer: (msg, peer) => this.transfers?.answerTcp(msg, peer) ?? this.answer(msg, 'tcp', peer)?.response,
      onClose: (reason) => metrics.countTcpClose(reason),
    });
    metrics.tcpState = () => this.tcpState();
    this.rateLimit = new ResponseRateLimiter(opts.rateLimit ?? DEFAULT_RATE_LIMIT);
    const rl = this.rateLimit.stats;
    metrics.rateLimited = () => [rl.dropped, rl.slipped];
  }

  /** Open TCP connections and their unsent answer octets (for metrics and tests). */
  tcpState(): { connections: number; bufferedBytes: number } {
    return { connections: this.connections.size, bufferedBytes: this.connections.bufferedBytes() };
  }

  /**
   * Binds both sockets; resolves with the port. Asked for port 0, UDP picks one and TCP takes the
   * same, trying again with another if TCP finds it taken.
   */
  async start(): Promise<number> {
    if (this.opts.host === '') {
      this.host = '::';
      try {
        return await this.bindBoth();
      } catch (err) {
        if (!NO_IPV6.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
        this.closeBatched();
        this.udp?.close();
        this.log.warn('no IPv6 on this host: listening on IPv4 only', { error: err });
        this.host = '0.0.0.0';
      }
    }
    return this.bindBoth();
  }

  /** The address the sockets are bound to ("::" is dual-stack). */
  boundHost(): string {
    return this.host;
  }

  private async bindBoth(): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      const port = await this.bindUdp(this.opts.port);
      try {
        await this.listenTcp(port);
        return port;
      } catch (err) {
        const inUse = (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
        if (this.opts.port !== 0 || !inUse || attempt >= 10) throw err;
        this.closeBatched();
        await new Promise<void>((resolve) => this.udp!.close(() => resolve()));
      }
    }
  }

  private async bindUdp(port: number): Promise<number> {
    const type = net.isIPv6(this.host) ? 'udp6' : 'udp4';
    // "::" with ipv6Only off takes IPv4 too (as ::ffff:a.b.c.d). A wildcard socket answers from
    // the address the kernel routes by, which is the queried one on a pod's single address per
    // family; a host with several addresses per family should list one --listen each.
    const udp = dgram.createSocket({
      type,
      ipv6Only: false,
      recvBufferSize: 4 << 20,
      sendBufferSize: 4 << 20,
      lookup: peerAddressAsIs,
    });
    this.udp = udp;
    udp.on('message', (msg, peer) => this.onDatagram(msg, peer));
    udp.on('error', (err) => this.log.error('UDP socket error', { error: err }));
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(port, this.host, () => {
        udp.off('error', reject);
        resolve();
      });
    });
    if (this.opts.udpIo === 'native') this.takeOverReading(udp);
    return udp.address().port;
  }

  /** The batched path on the bound socket, if the module loads; else dgram goes on reading it. */
  private takeOverReading(udp: dgram.Socket): void {
    const mod = loadNativeModule();
    // Per datagram of a batch: what the responder decided, or why it could not.
    const decisions = Array.from({ length: SLOTS }, () => new Decision());
    const undecided: unknown[] = new Array<unknown>(SLOTS);
    try {
      if (mod instanceof Error) throw mod;
      const batched = new BatchedUdp(
        mod,
        udp,
        Math.max(this.opts.maxUdpSize, 512),
        (msgs, count) => {
          this.answered = performance.now();
          this.responder.decideBatch(msgs, count, 'udp', decisions, undecided);
        },
        (msg, into, peer, slot) => {
          // One clock read per query: in a batch each query begins when the one before it was
          // answered, and the first also takes the batch's decisions (native-udp.ts).
          const out = this.answer(msg, 'udp', peer, into, this.answered, decisions[slot], undecided[slot]);
          if (!out || out.length === 0) return 0;
          // Larger than the slot cannot happen (the responder caps UDP at --max-udp-size); if it did,
          // the answer is copied as far as it fits rather than sent from a stray buffer.
          if (out.response !== into) out.response!.copy(into, 0, 0, Math.min(out.length, into.length));
          return this.admitted(msg, out, into, Math.min(out.length, into.length), peer);
        },
      );
      this.batched = batched;
      this.metrics.udpNotSent = () => [batched.stats[STAT.sendErrors]!, batched.stats[STAT.sendDropped]!];
      let logged = { errors: 0, dropped: 0 };
      this.batchedErrors = setInterval(() => {
        const errors = batched.stats[STAT.sendErrors]!;
        const dropped = batched.stats[STAT.sendDropped]!;
        if (errors === logged.errors && dropped === logged.dropped) return;
        // The reasons of capi_dns_server_udp_answers_not_sent_total.
        this.log.warn('UDP answers not sent', {
          refused: errors - logged.errors,
          bufferFull: dropped - logged.dropped,
          lastError: errnoName(batched.stats[STAT.lastSendErrno]!),
        });
        logged = { errors, dropped };
      }, SEND_ERRORS_LOG_MS).unref();
    } catch (err) {
      if (!fallbackSaid)
        this.log.warn('UDP through dgram: the batched native module is not usable', { error: err });
      fallbackSaid = true;
    }
  }

  private closeBatched(): void {
    clearInterval(this.batchedErrors);
    const stats = this.batched?.stats;
    if (stats)
      this.log.info('UDP batched path closed', {
        batches: stats[STAT.batches],
        received: stats[STAT.received],
        sent: stats[STAT.sent],
        notSent: stats[STAT.sendErrors]! + stats[STAT.sendDropped]!,
      });
    this.batched?.close();
    this.batched = undefined;
  }

  private async listenTcp(port: number): Promise<void> {
    // No server.maxConnections: at the cap, TcpConnections closes an idle connection to admit
    // the new one (RFC 7766 section 6.2.2) rather than resetting the newcomer.
    const tcp = net.createServer({ noDelay: true }, (socket) => this.connections.accept(socket));
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen({ port, host: this.host, ipv6Only: false }, () => {
        tcp.off('error', reject);
        resolve();
      });
    });
    this.tcp = tcp;
    tcp.on('error', (err) => this.log.error('TCP server error', { error: err }));
  }

  async stop(): Promise<void> {
    this.connections.stop();
    this.closeBatched();
    await Promise.all([
      new Promise<void>((resolve) => (this.udp ? this.udp.close(() => resolve()) : resolve())),
      new Promise<void>((resolve) => (this.tcp ? this.tcp.close(() => resolve()) : resolve())),
    ]);
  }

  /**
   * The response (the responder's reused Outcome: read it at once), undefined after a failure.
   * With `decided`, what the responder decided for `msg` before (the batched path's first pass;
   * `failed`: why it could not).
   */
  private answer(
    msg: Buffer,
    transport: 'udp' | 'tcp',
    peer: string | (() => string),
    into?: Buffer,
    began = performance.now(),
    decided?: Decision,
    failed?: unknown,
  ): Outcome | undefined {
    try {
      if (failed !== undefined) throw failed;
      const out = decided
        ? this.responder.write(msg, decided, into)
        : this.responder.respond(msg, transport, into);
      const ended = (this.answered = performance.now());
      this.metrics.countQuery(transport, out.zone, out.qtype, out.rcode, (ended - began) / 1000);
      if (this.opts.logQueries)
        this.log.info('query', {
          peer: typeof peer === 'string' ? peer : peer(),
          transport,
          qtype: out.qtype,
          rcode: out.rcode,
          size: out.response ? out.length : undefined,
        });
      return out;
    } catch (err) {
      // A bug must cost one answer, not the server. Logged sparingly: a flood would flood the log.
      this.answered = performance.now();
      this.metrics.countQuery(transport, undefined, undefined, 2, (this.answered - began) / 1000);
      if (this.failures++ % 1000 === 0)
        this.log.error('failed to answer a query', {
          error: err,
          failures: this.failures,
          peer: typeof peer === 'string' ? peer : peer(),
        });
      return undefined;
    }
  }

  private onDatagram(msg: Buffer, peer: dgram.RemoteInfo): void {
    const out = this.answer(msg, 'udp', peer.address);
    const response = out?.response;
    const length = response ? this.admitted(msg, out, response, out.length, peer.address) : 0;
    if (length) this.udp?.send(response!, 0, length, peer.port, peer.address);
  }

  /**
   * Response rate limiting (rate-limit.ts) of a UDP answer written in `buf`: the octets to send,
   * `length` as it is, 0 to drop it, or fewer for its truncated form (slip).
   */
  private admitted(
    msg: Buffer,
    out: Outcome,
    buf: Buffer,
    length: number,
    peer: string | (() => string),
  ): number {
    if (!this.rateLimit.enabled) return length;
    const address = typeof peer === 'string' ? peer : peer();
    const verdict = this.rateLimit.decide(address, msg, out.rcode, out.zone, this.answered);
    if (verdict === SEND) return length;
    return verdict === SLIP ? truncateInPlace(buf, length) : 0;
  }
}

/**
 * dgram resolves the address of every send with its `lookup` (dns.lookup by default, which
 * answers an IP literal only on the next tick, one closure and one tick per datagram). The
 * server only ever sends to the address a datagram came from, always an IP literal of the
 * socket's family, so it is handed back as it is, at once.
 */
function peerAddressAsIs(
  address: string,
  family: unknown,
  callback: (err: null, address: string, family: number) => void,
): void {
  callback(null, address, family === 6 ? 6 : 4);
}
