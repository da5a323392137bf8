// NOTIFY (RFC 1996) to a zone's secondaries whenever its serial changes, over
// UDP from the address the server listens on (secondaries accept NOTIFY from
// their primary's address), signed with the zone's TSIG key, retried until the
// secondary answers: every 1 s, doubling, 5 times (RFC 1996 section 3.6 leaves
// the interval to us; BIND and Knot retry a handful of times too). A newer
// serial replaces the retries of an older one.
import dgram from 'node:dgram';
import net from 'node:net';
import type { Logger } from '../../runtime/log.js';
import type { TransferImage, Secondary } from './image.js';
import { nameWire } from './rr-wire.js';
import { sign, verify, type TsigKey } from './tsig.js';
import { keyMapOf } from './key-ring.js';

const OPCODE_NOTIFY = 4;
export const NOTIFY_ATTEMPTS = 5;
const FIRST_RETRY_MS = 1000;

export type NotifyResult = 'answered' | 'failed' | 'rejected';

export interface NotifierOptions {
  keys: TsigKey[] | ReadonlyMap<string, TsigKey>;
  /** The address NOTIFY goes out from: the server's listen address ('' or a wildcard: the kernel's choice). */
  sourceAddress: string;
  log: Logger;
  onResult?: (zone: string, secondary: string, result: NotifyResult) => void;
  /** First retry after this long (tests shorten it). */
  firstRetryMs?: number;
}

interface Pending {
  id: number;
  serial: number;
  attempt: number;
  timer: NodeJS.Timeout | undefined;
  mac: Buffer;
  zone: string;
  secondary: Secondary;
  message: Buffer;
}

export class Notifier {
  readonly name = 'notify';
  private readonly notified = new Map<string, number>();
  private readonly pending = new Map<string, Pending>();
  private readonly sockets = new Map<4 | 6, dgram.Socket>();
  private readonly keys: ReadonlyMap<string, TsigKey>;
  private stopped = false;
  /** Builds before the server listens: announced once it does (a secondary told earlier would find nobody). */
  private waiting: TransferImage[] | undefined = [];

  constructor(private readonly opts: NotifierOptions) {
    this.keys = keyMapOf(opts.keys);
  }

  /** The serial each zone's secondaries were last told of (metrics). */
  serials(): ReadonlyMap<string, number> {
    return this.notified;
  }

  /** A build's images: every zone whose serial moved since the last is announced to its secondaries. */
  changed(images: TransferImage[]): void {
    if (this.stopped) return;
    if (this.waiting) {
      this.waiting = images;
      return;
    }
    for (const image of images) {
      if (this.notified.get(image.zone) === image.serial) continue;
      this.notified.set(image.zone, image.serial);
      const key = this.keys.get(image.config.keyName);
      if (!key) {
        this.opts.log.error('no TSIG key for the zone: its secondaries are not notified', {
          zone: image.zone,
          key: image.config.keyName,
        });
        continue;
      }
      for (const secondary of image.config.secondaries) this.send(image, secondary, key);
    }
  }

  /** Started after the DNS sockets listen. */
  start(): void {
    const images = this.waiting ?? [];
    this.waiting = undefined;
    this.changed(images);
  }

  stop(): void {
    this.stopped = true;
    for (const p of this.pending.values()) clearTimeout(p.timer);
    this.pending.clear();
    for (const s of this.sockets.values()) s.close();
    this.sockets.clear();
  }

  private send(image: TransferImage, secondary: Secondary, key: TsigKey): void {
    const target = `${secondary.address}#${secondary.port}`;
    const where = `${image.zone}@${target}`;
    clearTimeout(this.pending.get(where)?.timer);
    const id = (Math.random() * 0x10000) | 0;
    // RFC 1996 section 3.7: the question is the zone's SOA; the answer may carry the new SOA.
    const question = Buffer.concat([nameWire(image.zone), Buffer.from([0, 6, 0, 1])]);
    const header = Buffer.alloc(12);
    header.writeUInt16BE(id, 0);
    header[2] = (OPCODE_NOTIFY << 3) | 0x04; // AA
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(1, 6);
    const { message, mac } = sign(Buffer.concat([header, question, image.soa]), key, {
      now: Math.floor(Date.now() / 1000),
    });
    const p: Pending = {
      id,
      serial: image.serial,
      attempt: 0,
      timer: undefined,
      mac,
      zone: image.zone,
      secondary,
      message,
    };
    this.pending.set(where, p);
    this.attempt(where, p);
  }

  private attempt(where: string, p: Pending): void {
    if (this.stopped || this.pending.get(where) !== p) return;
    if (p.attempt >= NOTIFY_ATTEMPTS) {
      this.pending.delete(where);
      this.opts.log.warn('NOTIFY not answered', {
        zone: p.zone,
        secondary: where,
        serial: p.serial,
        attempts: p.attempt,
      });
      this.opts.onResult?.(p.zone, `${p.secondary.address}#${p.secondary.port}`, 'failed');
      return;
    }
    p.attempt++;
    const socket = this.socketFor(net.isIPv6(p.secondary.address) ? 6 : 4);
    socket.send(p.message, p.secondary.port, p.secondary.address, (err) => {
      if (err) this.opts.log.debug('NOTIFY not sent', { zone: p.zone, secondary: where, error: err });
    });
    p.timer = setTimeout(
      () => this.attempt(where, p),
      (this.opts.firstRetryMs ?? FIRST_RETRY_MS) * 2 ** (p.attempt - 1),
    );
    p.timer.unref();
  }

  private socketFor(family: 4 | 6): dgram.Socket {
    let socket = this.sockets.get(family);
    if (socket) return socket;
    socket = dgram.createSocket(family === 6 ? 'udp6' : 'udp4');
    const source = this.opts.sourceAddress;
    const bindTo =
      source && !['::', '0.0.0.0'].includes(source) && net.isIPv6(source) === (family === 6)
        ? source
        : undefined;
    socket.bind({ port: 0, address: bindTo });
    socket.on('message', (msg, rinfo) => this.onResponse(msg, rinfo));
    socket.on('error', (err) => this.opts.log.warn('NOTIFY socket error', { error: err }));
    socket.unref();
    this.sockets.set(family, socket);
    return socket;
  }

  /** RFC 1996 section 4.7: a response with our ID, from the secondary we asked, ends the retries. */
  private onResponse(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    if (msg.length < 12 || !(msg[2]! & 0x80)) return;
    const id = msg.readUInt16BE(0);
    for (const [where, p] of this.pending) {
      if (p.id !== id || p.secondary.port !== rinfo.port || p.secondary.address !== rinfo.address) continue;
      const rcode = msg[3]! & 0x0f;
      const check = verify(msg, this.keys, Math.floor(Date.now() / 1000), p.mac);
      // An answer we cannot trust (unsigned, wrong MAC) is no answer: the retries go on.
      if (!check.ok) {
        this.opts.log.warn('NOTIFY answer without a valid TSIG', {
          zone: p.zone,
          secondary: where,
          error: check.error,
        });
        return;
      }
      clearTimeout(p.timer);
      this.pending.delete(where);
      const result: NotifyResult = rcode === 0 ? 'answered' : 'rejected';
      if (rcode !== 0)
        this.opts.log.warn('NOTIFY refused by the secondary', { zone: p.zone, secondary: where, rcode });
      this.opts.onResult?.(p.zone, `${p.secondary.address}#${p.secondary.port}`, result);
      return;
    }
  }
}
