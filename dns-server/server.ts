// DNS over UDP and TCP on one address (RFC 1035 section 4.2, RFC 7766).
// Everything here is transport: the answers come from the Responder.
import dgram from 'node:dgram';
import net from 'node:net';
import type { Logger } from './log.js';
import type { Metrics } from './metrics.js';
import type { Responder } from './wire/responder.js';

export interface ServerOptions {
  host: string;
  port: number;
  /** Close a TCP connection that has been idle this long (RFC 7766 section 6.2.3). */
  tcpIdleMs: number;
  /** At most this many open TCP connections; more are closed at once. */
  tcpMaxConnections: number;
  /** Log every query (debug aid; off by default). */
  logQueries: boolean;
}

export class DnsServer {
  private udp: dgram.Socket | undefined;
  private tcp: net.Server | undefined;
  private readonly connections = new Set<net.Socket>();
  private failures = 0;

  constructor(
    private readonly opts: ServerOptions,
    private readonly responder: Responder,
    private readonly metrics: Metrics,
    private readonly log: Logger,
  ) {}

  /**
   * Binds both sockets; resolves with the port. Asked for port 0, UDP picks one and TCP takes the
   * same, trying again with another if TCP finds it taken.
   */
  async start(): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      const port = await this.bindUdp(this.opts.port);
      try {
        await this.listenTcp(port);
        return port;
      } catch (err) {
        const inUse = (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
        if (this.opts.port !== 0 || !inUse || attempt >= 10) throw err;
        await new Promise<void>((resolve) => this.udp!.close(() => resolve()));
      }
    }
  }

  private async bindUdp(port: number): Promise<number> {
    const type = net.isIPv6(this.opts.host) ? 'udp6' : 'udp4';
    const udp = dgram.createSocket({
      type,
      recvBufferSize: 4 << 20,
      sendBufferSize: 4 << 20,
      lookup: peerAddressAsIs,
    });
    this.udp = udp;
    udp.on('message', (msg, peer) => this.onDatagram(msg, peer));
    udp.on('error', (err) => this.log.error('UDP socket error', { error: err }));
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(port, this.opts.host, () => {
        udp.off('error', reject);
        resolve();
      });
    });
    return udp.address().port;
  }

  private async listenTcp(port: number): Promise<void> {
    const tcp = net.createServer({ noDelay: true }, (socket) => this.onConnection(socket));
    tcp.maxConnections = this.opts.tcpMaxConnections;
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(port, this.opts.host, () => {
        tcp.off('error', reject);
        resolve();
      });
    });
    this.tcp = tcp;
    tcp.on('error', (err) => this.log.error('TCP server error', { error: err }));
  }

  async stop(): Promise<void> {
    for (const c of this.connections) c.destroy();
    await Promise.all([
      new Promise<void>((resolve) => (this.udp ? this.udp.close(() => resolve()) : resolve())),
      new Promise<void>((resolve) => (this.tcp ? this.tcp.close(() => resolve()) : resolve())),
    ]);
  }

  private answer(msg: Buffer, transport: 'udp' | 'tcp', peer: string): Buffer | undefined {
    try {
      const out = this.responder.respond(msg, transport);
      this.metrics.countQuery(transport, out.qtype, out.rcode);
      if (this.opts.logQueries)
        this.log.info('query', {
          peer,
          transport,
          qtype: out.qtype,
          rcode: out.rcode,
          size: out.response?.length,
        });
      return out.response;
    } catch (err) {
      // A bug must cost one answer, not the server. Logged sparingly: a flood would flood the log.
      this.metrics.countQuery(transport, undefined, 2);
      if (this.failures++ % 1000 === 0)
        this.log.error('failed to answer a query', { error: err, failures: this.failures, peer });
      return undefined;
    }
  }

  private onDatagram(msg: Buffer, peer: dgram.RemoteInfo): void {
    const response = this.answer(msg, 'udp', peer.address);
    if (response) this.udp?.send(response, peer.port, peer.address);
  }

  /** RFC 1035 section 4.2.2: each message is preceded by its two-octet length; several per connection. */
  private onConnection(socket: net.Socket): void {
    this.connections.add(socket);
    socket.setTimeout(this.opts.tcpIdleMs, () => socket.destroy());
    socket.on('close', () => this.connections.delete(socket));
    socket.on('error', () => undefined); // resets by clients are normal
    let pending: Buffer = Buffer.alloc(0);
    const peer = socket.remoteAddress ?? '';
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= 2) {
        const length = pending.readUInt16BE(0);
        if (pending.length < 2 + length) break;
        const msg = pending.subarray(2, 2 + length);
        pending = pending.subarray(2 + length);
        const response = this.answer(msg, 'tcp', peer);
        if (!response) continue;
        const framed = Buffer.allocUnsafe(2 + response.length);
        framed.writeUInt16BE(response.length, 0);
        response.copy(framed, 2);
        if (!socket.write(framed)) {
          // Back-pressure: a client that does not read its answers stops being read.
          socket.pause();
          socket.once('drain', () => socket.resume());
        }
      }
    });
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
