// Serves AXFR and IXFR over TCP from the images the builds made: who may
// transfer (a listed secondary with a valid TSIG), how many at once, and the
// stream of signed messages. Everything else is the responder's. Each process
// that answers TCP has one, fed every build (its journal starts at its first).
import type { Logger } from '../../runtime/log.js';
import type { TransferImage } from './image.js';
import { differenceOf, Journal } from './journal.js';
import { AXFR, IXFR, serialOlder, transferRequestOf, type TransferRequest } from './request.js';
import { axfrRecords, errorMessage, ixfrRecords, messagesOf, soaOnly } from './responses.js';
import { keyMapOf } from './key-ring.js';
import { sign, timeOther, TSIG_ERROR, verify, type TsigKey } from './tsig.js';

const FORMERR = 1;
const SERVFAIL = 2;
const NOTAUTH_RCODE = 9;
const REFUSED = 5;

export interface TransferOptions {
  /** A key ring's Map is read as it is at each request (declared keys change at run time). */
  keys: TsigKey[] | ReadonlyMap<string, TsigKey>;
  /** Transfers streaming at once, over every zone; more are answered SERVFAIL (the secondary retries). */
  maxConcurrent: number;
  /** Octets of differences kept per zone for IXFR; 0: every IXFR gets the whole zone. */
  journalOctets: number;
}

export type TransferResult =
  | 'axfr'
  | 'ixfr'
  | 'ixfr_axfr'
  | 'current'
  | 'refused'
  | 'notauth'
  | 'busy'
  | 'formerr'
  /** The connection went away (or was closed) before the last message. */
  | 'abandoned';

export interface TransferHooks {
  log: Logger;
  /** Milliseconds clock; tests skew it. */
  now?: () => number;
  /** After each request: its result, and for a complete transfer the secondary and the serial it now has. */
  onResult?: (zone: string, result: TransferResult, secondary?: string, serial?: number) => void;
}

interface ZoneState {
  image: TransferImage;
  journal: Journal;
}

/** Refusals are logged at most this often (a storm of them must not flood the log). */
const REFUSAL_LOG_MS = 1000;

export class TransferServer {
  private readonly zones = new Map<string, ZoneState>();
  private readonly keys: ReadonlyMap<string, TsigKey>;
  private active = 0;
  private lastRefusalLog = 0;
  private refusalsUnlogged = 0;

  constructor(
    private readonly opts: TransferOptions,
    private readonly hooks: TransferHooks,
  ) {
    this.keys = keyMapOf(opts.keys);
  }

  /** Transfers streaming now. */
  get streaming(): number {
    return this.active;
  }

  /** The journal of a zone (metrics, tests). */
  journalOf(zone: string): Journal | undefined {
    return this.zones.get(zone)?.journal;
  }

  /** A new build's images; a zone whose serial moved gets the difference in its journal. */
  load(images: TransferImage[]): void {
    const seen = new Set<string>();
    for (const image of images) {
      seen.add(image.zone);
      const state = this.zones.get(image.zone);
      if (!state) {
        this.zones.set(image.zone, { image, journal: new Journal(this.opts.journalOctets) });
        continue;
      }
      if (state.image.serial !== image.serial && this.opts.journalOctets > 0)
        state.journal.add(differenceOf(state.image, image));
      state.image = image;
    }
    for (const zone of [...this.zones.keys()]) if (!seen.has(zone)) this.zones.delete(zone);
  }

  /**
   * The answer to a TCP message if it is a transfer request: one message, or a stream of them
   * (read lazily by the connection); undefined when it is not one.
   */
  answerTcp(msg: Buffer, peer: string): Buffer | Iterator<Buffer> | undefined {
    const request = transferRequestOf(msg);
    if (request === undefined) return undefined;
    if (request === 'formerr')
      return this.refuse(msg, 12, FORMERR, 'formerr', '', peer, 'IXFR without the client SOA');
    const state = this.zones.get(request.qname);
    const now = this.now();
    if (!state || request.qclass !== 1)
      return this.refuse(
        msg,
        request.questionEnd,
        REFUSED,
        'refused',
        request.qname,
        peer,
        'no transfers of this zone',
      );
    const check = verify(msg, this.keys, now);
    if (!check.ok) {
      if (check.error === 'missing')
        return this.refuse(msg, request.questionEnd, REFUSED, 'refused', request.qname, peer, 'no TSIG');
      if (check.error === 'malformed')
        return this.refuse(
          msg,
          request.questionEnd,
          FORMERR,
          'formerr',
          request.qname,
          peer,
          'malformed TSIG',
        );
      this.logRefusal(request.qname, peer, `TSIG ${check.error}`);
      this.hooks.onResult?.(request.qname, 'notauth');
      const response = errorMessage(msg, request.questionEnd, NOTAUTH_RCODE);
      // RFC 8945 section 5.3.2: BADKEY and BADSIG unsigned; BADTIME signed, with our time (5.2.3).
      const key = check.key ?? {
        name: check.tsig.keyName,
        algorithm: 'hmac-sha256' as const,
        secret: Buffer.alloc(32),
      };
      return sign(response, key, {
        now,
        error: TSIG_ERROR[check.error],
        unsignedError: check.error !== 'BADTIME',
        priorMac: check.error === 'BADTIME' ? check.tsig.mac : undefined,
        timeSigned: check.error === 'BADTIME' ? check.tsig.timeSigned : undefined,
        other: check.error === 'BADTIME' ? timeOther(now) : undefined,
      }).message;
    }
    // From here the request is signed with a key we hold: every answer is signed (RFC 8945 section 5.3).
    const signedError = (rcode: number, result: TransferResult, reason: string): Buffer => {
      this.logRefusal(request.qname, peer, reason);
      this.hooks.onResult?.(request.qname, result);
      return sign(errorMessage(msg, request.questionEnd, rcode), check.key, { now, priorMac: check.tsig.mac })
        .message;
    };
    if (!state.image.config.secondaries.some((s) => s.address === plainAddress(peer)))
      return signedError(REFUSED, 'refused', 'not a listed secondary');
    if (check.key.name !== state.image.config.keyName)
      return signedError(REFUSED, 'refused', "another key than the zone's");
    if (this.active >= this.opts.maxConcurrent)
      return signedError(SERVFAIL, 'busy', 'too many transfers at once');
    return this.stream(msg, request, state, check.key, check.tsig.mac, peer);
  }
  private *stream(
    msg: Buffer,
    request: TransferRequest,
    state: ZoneState,
    key: TsigKey,
    requestMac: Buffer,
    peer: string,
  ): Generator<Buffer> {
    // Taken from the image current now: a build during the stream does not change what it sends.
    const image = state.image;
    let result: TransferResult = 'axfr';
    let records: Iterable<Uint8Array> = axfrRecords(image);
    if (request.qtype === IXFR) {
      const client = request.clientSerial!;
      if (!serialOlder(client, image.serial)) {
        result = 'current';
        records = soaOnly(image);
      } else {
        const d = state.journal.since(client);
        result = d ? 'ixfr' : 'ixfr_axfr';
        if (d) records = ixfrRecords(image, d);
      }
    }
    this.active++;
    let mac = requestMac;
    let first = true;
    let messages = 0;
    let complete = false;
    try {
      for (const m of messagesOf(msg, request.questionEnd, records)) {
        const signed = sign(m, key, { now: this.now(), priorMac: mac, continuation: !first });
        mac = signed.mac;
        first = false;
        messages++;
        yield signed.message;
      }
      complete = true;
    } finally {
      this.active--;
      this.hooks.onResult?.(
        request.qname,
        complete ? result : 'abandoned',
        complete ? plainAddress(peer) : undefined,
        complete ? image.serial : undefined,
      );
      this.hooks.log.info(complete ? 'zone transferred' : 'zone transfer abandoned', {
        zone: request.qname,
        peer,
        type: request.qtype === AXFR ? 'AXFR' : 'IXFR',
        result,
        serial: image.serial,
        clientSerial: request.clientSerial,
        messages,
      });
    }
  }

  private refuse(
    msg: Buffer,
    questionEnd: number,
    rcode: number,
    result: TransferResult,
    zone: string,
    peer: string,
    reason: string,
  ): Buffer {
    this.logRefusal(zone, peer, reason);
    this.hooks.onResult?.(zone, result);
    return errorMessage(msg, questionEnd, rcode);
  }

  private logRefusal(zone: string, peer: string, reason: string): void {
    const now = Date.now();
    if (now - this.lastRefusalLog < REFUSAL_LOG_MS) {
      this.refusalsUnlogged++;
      return;
    }
    this.hooks.log.warn('zone transfer refused', {
      zone,
      peer,
      reason,
      alsoRefusedSinceLastLog: this.refusalsUnlogged,
    });
    this.lastRefusalLog = now;
    this.refusalsUnlogged = 0;
  }

  private now(): number {
    return Math.floor((this.hooks.now?.() ?? Date.now()) / 1000);
  }
}

/** "::ffff:127.0.0.1" (an IPv4 client of a dual-stack socket) → "127.0.0.1". */
export function plainAddress(peer: string): string {
  return peer.startsWith('::ffff:') && peer.includes('.') ? peer.slice(7) : peer;
}
