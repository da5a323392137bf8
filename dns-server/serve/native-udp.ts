// The batched UDP path (native/udp_batch.c, docs/adr/0105): the socket dgram
// bound is read with recvmmsg into a ring, one call into JS answers a whole
// batch into an output ring, and one sendmmsg sends it. dgram keeps the socket
// (binding, the cluster module's sharing, closing); this only takes over the
// reading and the answering.
import type dgram from 'node:dgram';
import type { NativeModule } from '../native/module.js';

/** Datagrams per batch: NSD's and Knot's recvmmsg batch size. */
export const SLOTS = 64;
/**
 * Larger than any UDP payload (65,507 octets over IPv4), so that no datagram is ever cut, as with
 * dgram (which reads into 64 KiB). 4 MiB of address space; only the pages datagrams touch become
 * resident (one 4 KiB page per slot for queries of ordinary size).
 */
export const IN_SLOT = 65536;

/** Indices of the counters the module keeps in a Float64Array (the enum in udp_batch.c). */
export const STAT = {
  batches: 0,
  received: 1,
  sent: 2,
  sendErrors: 3,
  sendDropped: 4,
  lastSendErrno: 5,
  recvErrors: 6,
  lastRecvErrno: 7,
  truncated: 8,
} as const;
const STAT_COUNT = 9;

/**
 * Answers one datagram into `into` (its slot of the output ring); returns the octets written, 0
 * for no answer. `peer` formats the sender's address, for logs only; `slot` is its place in the
 * batch (0 first).
 */
export type AnswerInto = (msg: Buffer, into: Buffer, peer: () => string, slot: number) => number;

/**
 * What comes before any datagram of a batch is answered: everything short of writing the answers
 * to `msgs[0, count)` (docs/adr/0106: the lookups' cache misses then overlap).
 */
export type DecideBatch = (msgs: readonly Buffer[], count: number) => void;

/** dgram's libuv handle: its descriptor, and the way to stop libuv reading it. */
interface UdpWrap {
  fd: number;
  recvStop(): number;
}

/**
 * The descriptor of a bound dgram socket. Node has no public API for it (`_handle` is deprecated,
 * DEP0112, and warns): the handle sits in the socket's state under a symbol. The project pins its
 * Node (package.json), so a change there shows in the tests, and an absent handle only means the
 * dgram path.
 */
function wrapOf(socket: dgram.Socket): UdpWrap | undefined {
  const state = Object.getOwnPropertySymbols(socket)
    .filter((s) => s.description === 'state symbol')
    .map((s) => (socket as unknown as Record<symbol, { handle?: Partial<UdpWrap> } | undefined>)[s])[0];
  const handle = state?.handle;
  if (typeof handle?.fd !== 'number' || handle.fd < 0 || typeof handle.recvStop !== 'function')
    return undefined;
  return handle as UdpWrap;
}

/** One socket read and answered in batches. */
export class BatchedUdp {
  readonly stats = new Float64Array(STAT_COUNT);
  private handle: object | undefined;

  /**
   * Takes over the reading of a bound dgram socket. Throws if the socket's descriptor cannot be
   * had or the module refuses it; dgram then still reads it.
   * @param outSlot octets per answer: the largest UDP response (--max-udp-size)
   */
  constructor(
    private readonly mod: NativeModule,
    socket: dgram.Socket,
    outSlot: number,
    decide: DecideBatch,
    answer: AnswerInto,
  ) {
    const wrap = wrapOf(socket);
    if (!wrap) throw new Error("dgram's socket descriptor is not reachable in this Node");
    const inRing = Buffer.allocUnsafeSlow(SLOTS * IN_SLOT);
    const outRing = Buffer.allocUnsafeSlow(SLOTS * outSlot);
    // [0, SLOTS): received lengths (0: cut, which the slot size rules out); [SLOTS, 2 SLOTS): answers'.
    const lengths = new Int32Array(SLOTS * 2);
    const views = Array.from({ length: SLOTS }, (_, i) => outRing.subarray(i * outSlot, (i + 1) * outSlot));
    const peers = Array.from({ length: SLOTS }, (_, i) => () => mod.peer(this.handle!, i));
    const msgs: Buffer[] = new Array<Buffer>(SLOTS);
    const onBatch = (count: number): void => {
      for (let i = 0; i < count; i++) msgs[i] = inRing.subarray(i * IN_SLOT, i * IN_SLOT + lengths[i]!);
      decide(msgs, count);
      for (let i = 0; i < count; i++) lengths[SLOTS + i] = answer(msgs[i]!, views[i]!, peers[i]!, i);
    };
    this.handle = mod.attach(wrap.fd, SLOTS, inRing, IN_SLOT, outRing, outSlot, lengths, this.stats, onBatch);
    // From here on the module reads (its own duplicate of the descriptor); what libuv read before
    // this line was delivered as 'message' events and answered through dgram.
    wrap.recvStop();
  }

  /** Stops reading; the module sends a batch in progress first. Idempotent. */
  close(): void {
    if (!this.handle) return;
    this.mod.close(this.handle);
    this.handle = undefined;
  }
}
