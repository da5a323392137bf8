// DNS over TCP with every resource a client can hold bounded (RFC 7766
// sections 6 to 10). One client must not be able to grow the process: a
// connection that does not read its answers stops being read, a message
// must arrive whole within a deadline, a connection lives and answers only
// so long, one address holds only so many, and at the server's cap an idle
// connection makes room for a new one instead of the new one being reset
// (which would break the TCP retry after a truncated UDP answer). Nor may
// clients that pipeline keep a new one waiting: queries are answered by a
// scheduler, the smallest backlog first, a bounded amount per turn of the loop.
import type net from 'node:net';

export interface TcpLimits {
  /** RFC 7766 section 6.2.3: close a connection idle this long, idle meaning no query in progress and no answer unsent. */
  idleMs: number;
  /** A message whose first octet has arrived must be complete within this long (the slow sender). */
  messageTimeoutMs: number;
  /** A connection is closed gracefully after this long, whatever it does. */
  maxLifetimeMs: number;
  /** ... or after answering this many queries. */
  maxQueries: number;
  /** At most this many open connections; at the cap the longest-idle one is closed to admit a new one. */
  maxConnections: number;
  /** At most this many open connections from one client address. */
  maxPerClient: number;
}

/**
 * Unsent answer octets above which a connection is no longer read: a client that does not read
 * its answers holds at most this plus one answer (at most 65,537 octets) plus one read chunk.
 */
export const OUTPUT_HIGH_WATER = 16 * 1024;

/**
 * Pipelined queries answered per connection in one visit of the scheduler before the next
 * connection gets its turn: a client that pipelines thousands cannot hold the process for their
 * whole length.
 */
export const QUERIES_PER_TURN = 16;

/**
 * Answer octets written over all TCP connections in one turn of the event loop; the rest waits for
 * the next turn, after the loop has polled again (new connections, their queries, UDP). 256 KiB is
 * eight of the largest answers a flood asks for, well under a millisecond of writing, and a
 * couple of thousand ordinary answers.
 */
export const OCTETS_PER_TURN = 256 * 1024;

/**
 * The order the scheduler serves connections with queries waiting: the fewest octets waiting
 * first, so that a new client's one query goes before a connection holding 64 KB of pipelined
 * ones (RFC 7766 section 10: keep serving new clients under attack), in arrival order among
 * equals (the sort is stable). Pure, for the unit tests.
 */
export function servingOrder<T extends { waitingOctets(): number }>(ready: Iterable<T>): T[] {
  return [...ready].sort((a, b) => a.waitingOctets() - b.waitingOctets());
}

export type CloseReason =
  | 'idle'
  | 'message_timeout'
  | 'write_stalled'
  | 'lifetime'
  | 'query_limit'
  | 'client_limit'
  | 'server_full'
  | 'evicted'
  | 'malformed';

export const CLOSE_REASONS: readonly CloseReason[] = [
  'idle',
  'message_timeout',
  'write_stalled',
  'lifetime',
  'query_limit',
  'client_limit',
  'server_full',
  'evicted',
  'malformed',
];

/**
 * Answers one DNS message: one response, or a stream of them (a zone transfer, RFC 5936 section
 * 2.2) that the connection reads one message at a time as its client takes them; undefined when
 * there is nothing to send.
 */
export type Answerer = (msg: Buffer, peer: string) => Buffer | Iterator<Buffer> | undefined;

class Connection {
  readonly openedAt: number;
  /** When the last complete query arrived (or the connection opened): the start of idleness. */
  lastQueryAt: number;
  /** When the first octet of a message still incomplete arrived; 0 when none is. */
  partialSince = 0;
  /** When its output went over the high-water mark and reading stopped; 0 when it is being read. */
  blockedSince = 0;
  queries = 0;
  closing = false;
  /** In the scheduler's queue, with a complete query waiting for its turn. */
  queued = false;
  private pending: Buffer = Buffer.alloc(0);
  /** The rest of a multi-message answer: sent before the next query is answered (in order). */
  private stream: Iterator<Buffer> | undefined;

  constructor(
    readonly socket: net.Socket,
    readonly peer: string,
    now: number,
    private readonly owner: TcpConnections,
  ) {
    this.openedAt = now;
    this.lastQueryAt = now;
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('drain', () => this.onDrain());
  }

  /**
   * Neither reading a message, nor holding a query waiting for its turn, nor sending an answer:
   * the only state RFC 7766 lets a server close without harm.
   */
  idle(): boolean {
    return (
      this.partialSince === 0 &&
      !this.queued &&
      !this.stream &&
      this.socket.writableLength === 0 &&
      !this.closing
    );
  }

  /** Octets read and not yet answered (the scheduler's priority: fewest first). */
  waitingOctets(): number {
    return this.pending.length;
  }

  /** A complete query is waiting and the connection may be answered (not closing, its client reads). */
  hasWork(): boolean {
    return (
      !this.closing &&
      !this.socket.destroyed &&
      !this.blockedSince &&
      (this.stream !== undefined ||
        (this.pending.length >= 2 && this.pending.length >= 2 + this.pending.readUInt16BE(0)))
    );
  }

  /** The stream's end: a transfer cut short (closed, reset) gives back what it holds. */
  endStream(): void {
    const stream = this.stream;
    this.stream = undefined;
    stream?.return?.();
  }

  private onData(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    this.owner.schedule(this);
  }

  /**
   * After each write reaches the kernel: Node's sockets buffer up to their own high-water mark
   * (64 KiB since Node 22) before write() says so and 'drain' follows, so a connection blocked at
   * our smaller mark would never hear 'drain' if its output stopped between the two.
   */
  private readonly written = (): void => {
    if (this.blockedSince && this.socket.writableLength <= OUTPUT_HIGH_WATER) this.onDrain();
  };

  private onDrain(): void {
    if (!this.blockedSince || this.closing) return;
    this.blockedSince = 0;
    this.socket.resume();
    this.owner.schedule(this);
  }

  /**
   * RFC 1035 section 4.2.2: each message is preceded by its two-octet length. Pipelined queries
   * (RFC 7766 section 6.2.1.1) are answered in turn, at most QUERIES_PER_TURN and while `budget`
   * octets last (at least one), until the output is over the high-water mark; what is left stays
   * read but unanswered until the scheduler comes back or the client has taken its answers.
   * Returns the answer octets written.
   */
  serve(budget: number): number {
    let written = 0;
    for (let answered = 0; answered < QUERIES_PER_TURN && written < budget && this.hasWork(); answered++) {
      if (this.stream) written += this.continueStream(budget - written);
      else written += this.answerNext(budget - written);
      if (this.closing) break;
      if (this.socket.writableLength > OUTPUT_HIGH_WATER) {
        // Back-pressure: a client that does not read its answers stops being read (and answered).
        this.blockedSince = this.owner.now();
        this.socket.pause();
      }
    }
    // An empty buffer must not pin the large chunk it was cut from.
    if (this.pending.length === 0) this.pending = Buffer.alloc(0);
    return written;
  }

  /** Answers the next query read (its first message, if the answer is a stream); returns the octets written. */
  private answerNext(budget: number): number {
    const length = this.pending.readUInt16BE(0);
    if (length === 0) {
      this.owner.close(this, 'malformed', true);
      return 0;
    }
    const msg = this.pending.subarray(2, 2 + length);
    this.pending = this.pending.subarray(2 + length);
    this.queries++;
    this.lastQueryAt = this.owner.now();
    const response = this.owner.answer(msg, this.peer);
    let written = 0;
    if (Buffer.isBuffer(response)) written = this.send(response);
    else if (response) {
      this.stream = response;
      written = this.continueStream(budget);
    }
    if (this.queries >= this.owner.limits.maxQueries) this.owner.close(this, 'query_limit', false);
    return written;
  }

  private send(response: Buffer): number {
    const framed = Buffer.allocUnsafe(2 + response.length);
    framed.writeUInt16BE(response.length, 0);
    response.copy(framed, 2);
    this.socket.write(framed, this.written);
    return framed.length;
  }

  /**
   * Writes the stream's next messages while `budget` lasts (at least one) and the client takes
   * them: a client that stops reading stops the stream at the high-water mark, holding one message.
   */
  private continueStream(budget: number): number {
    let written = 0;
    while (this.stream && written < Math.max(budget, 1) && this.socket.writableLength <= OUTPUT_HIGH_WATER) {
      const next = this.stream.next();
      if (next.done) this.stream = undefined;
      else written += this.send(next.value);
    }
    return written;
  }

  /**
   * A message deadline runs only while the client owes us octets: queries read but left
   * unanswered, waiting for their turn or for the client to take its answers, are the
   * scheduler's and the write stall's to time.
   */
  updateDeadline(): void {
    if (this.pending.length === 0 || this.blockedSince || this.queued) this.partialSince = 0;
    else if (this.partialSince === 0) this.partialSince = this.owner.now();
  }
}

export interface TcpConnectionsOptions {
  limits: TcpLimits;
  answer: Answerer;
  onClose?: (reason: CloseReason) => void;
  /** Milliseconds clock; tests leave it. */
  now?: () => number;
}

/** Every open DNS-over-TCP connection of one listening socket, and the limits over them. */
export class TcpConnections {
  readonly limits: TcpLimits;
  private readonly open = new Set<Connection>();
  private readonly perClient = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;
  /** Connections with a complete query waiting, served by drain() in servingOrder. */
  private readonly ready = new Set<Connection>();
  private drainQueued = false;
  readonly now: () => number;

  constructor(private readonly opts: TcpConnectionsOptions) {
    this.limits = opts.limits;
    this.now = opts.now ?? Date.now;
    // One timer for all connections instead of one per connection: deadlines are checked a few
    // times per shortest limit, which is precise enough for timeouts of seconds.
    const shortest = Math.min(opts.limits.idleMs, opts.limits.messageTimeoutMs, opts.limits.maxLifetimeMs);
    const every = Math.min(1000, Math.max(25, Math.floor(shortest / 4)));
    this.sweeper = setInterval(() => this.sweep(), every);
    this.sweeper.unref();
  }

  get size(): number {
    return this.open.size;
  }

  /** Unsent answer octets over all connections. */
  bufferedBytes(): number {
    let n = 0;
    for (const c of this.open) n += c.socket.writableLength;
    return n;
  }

  answer(msg: Buffer, peer: string): ReturnType<Answerer> {
    return this.opts.answer(msg, peer);
  }

  /**
   * A connection read something or may write again: its queries are answered in the check phase
   * of this turn of the event loop, after every socket that was ready has been read, so that the
   * scheduler sees them all and serves the smallest first.
   */
  schedule(connection: Connection): void {
    if (connection.hasWork() && !connection.queued) {
      connection.queued = true;
      this.ready.add(connection);
      if (!this.drainQueued) {
        this.drainQueued = true;
        setImmediate(() => this.drain());
      }
    }
    connection.updateDeadline();
  }

  /**
   * Answers waiting queries, fewest waiting octets first, until OCTETS_PER_TURN are written; the
   * connections not done are not read meanwhile (their buffers do not grow) and wait for the next
   * turn, when the loop has polled again and a newcomer can go ahead of them.
   */
  private drain(): void {
    this.drainQueued = false;
    let budget = OCTETS_PER_TURN;
    for (const c of servingOrder(this.ready)) {
      if (budget <= 0) break;
      budget -= c.serve(budget);
      if (c.hasWork()) continue;
      c.queued = false;
      this.ready.delete(c);
      c.updateDeadline();
      if (!c.blockedSince && !c.closing) c.socket.resume();
    }
    if (this.ready.size === 0) return;
    for (const c of this.ready) c.socket.pause();
    this.drainQueued = true;
    setImmediate(() => this.drain());
  }

  accept(socket: net.Socket): void {
    const peer = socket.remoteAddress ?? '';
    socket.on('error', () => undefined); // resets by clients are normal
    if ((this.perClient.get(peer) ?? 0) >= this.limits.maxPerClient) {
      this.opts.onClose?.('client_limit');
      socket.destroy();
      return;
    }
    if (this.open.size >= this.limits.maxConnections && !this.evictIdlest()) {
      this.opts.onClose?.('server_full');
      socket.destroy();
      return;
    }
    const connection = new Connection(socket, peer, this.now(), this);
    this.open.add(connection);
    this.perClient.set(peer, (this.perClient.get(peer) ?? 0) + 1);
    socket.on('close', () => this.forget(connection));
  }

  /**
   * Closes a connection. Graceful: stop reading, send what is answered, then FIN (RFC 7766
   * section 6.2.3 for idle and limits). Not graceful: the client broke a rule and is reset.
   */
  close(connection: Connection, reason: CloseReason, reset: boolean): void {
    if (connection.closing) return;
    connection.closing = true;
    this.opts.onClose?.(reason);
    if (reset) connection.socket.destroy();
    else {
      connection.socket.pause();
      connection.socket.end();
      // A client that never reads its last answers must not keep the socket half-closed forever.
      setTimeout(() => connection.socket.destroy(), this.limits.idleMs).unref();
    }
  }

  closeAll(): void {
    for (const c of this.open) c.socket.destroy();
  }

  /**
   * Stops: every connection gets the answers already written, then FIN; one whose client does not
   * close within a second is reset.
   */
  stop(): void {
    clearInterval(this.sweeper);
    for (const c of this.open) {
      c.closing = true;
      c.socket.pause();
      c.socket.end();
      setTimeout(() => c.socket.destroy(), 1000).unref();
    }
  }

  private forget(connection: Connection): void {
    connection.endStream();
    this.ready.delete(connection);
    if (!this.open.delete(connection)) return;
    const left = (this.perClient.get(connection.peer) ?? 1) - 1;
    if (left > 0) this.perClient.set(connection.peer, left);
    else this.perClient.delete(connection.peer);
  }

  /** RFC 7766 section 6.2.2: under pressure, close the connection idle the longest to admit a new one. */
  private evictIdlest(): boolean {
    let idlest: Connection | undefined;
    for (const c of this.open) if (c.idle() && (!idlest || c.lastQueryAt < idlest.lastQueryAt)) idlest = c;
    if (!idlest) return false;
    this.close(idlest, 'evicted', false);
    // Counted as gone now: its socket closes on the next turn of the loop.
    this.forget(idlest);
    return true;
  }

  private sweep(): void {
    const now = this.now();
    const { idleMs, messageTimeoutMs, maxLifetimeMs } = this.limits;
    for (const c of this.open) {
      if (c.closing) continue;
      if (c.partialSince && now - c.partialSince > messageTimeoutMs) this.close(c, 'message_timeout', true);
      else if (c.blockedSince && now - c.blockedSince > idleMs) this.close(c, 'write_stalled', true);
      else if (now - c.openedAt > maxLifetimeMs) this.close(c, 'lifetime', false);
      else if (c.idle() && now - c.lastQueryAt > idleMs) this.close(c, 'idle', false);
    }
  }
}
