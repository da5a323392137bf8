// Reads a zone-transfer request: the question, and for IXFR the client's SOA
// serial in the authority section (RFC 1995 section 3). Pure.
import { readName, skipRecord } from './tsig.js';

export const AXFR = 252;
export const IXFR = 251;
const SOA = 6;

export interface TransferRequest {
  qname: string;
  qtype: typeof AXFR | typeof IXFR;
  qclass: number;
  questionEnd: number;
  /** IXFR: the serial the client has; undefined when its SOA is missing (FORMERR). */
  clientSerial: number | undefined;
}

/**
 * The transfer asked for, if `msg` is a query (opcode 0) for AXFR or IXFR; 'formerr' if it
 * is one but cannot be read; undefined for any other message (the responder's).
 */
export function transferRequestOf(msg: Buffer): TransferRequest | 'formerr' | undefined {
  if (msg.length < 12 || msg[2]! & 0x80 || ((msg[2]! >> 3) & 0x0f) !== 0 || msg.readUInt16BE(4) !== 1)
    return undefined;
  const q = readName(msg, 12);
  if (!q || q.end + 4 > msg.length) return undefined;
  const qtype = msg.readUInt16BE(q.end);
  if (qtype !== AXFR && qtype !== IXFR) return undefined;
  const questionEnd = q.end + 4;
  const request: TransferRequest = {
    qname: q.name,
    qtype,
    qclass: msg.readUInt16BE(q.end + 2),
    questionEnd,
    clientSerial: undefined,
  };
  if (qtype === IXFR) {
    if (msg.readUInt16BE(6) !== 0 || msg.readUInt16BE(8) < 1) return 'formerr';
    const owner = readName(msg, questionEnd);
    if (!owner || owner.end + 10 > msg.length || msg.readUInt16BE(owner.end) !== SOA) return 'formerr';
    const end = skipRecord(msg, questionEnd);
    if (end === undefined || end - 20 < owner.end + 10) return 'formerr';
    request.clientSerial = msg.readUInt32BE(end - 20);
  }
  return request;
}

/** RFC 1982 serial arithmetic: a is older than b. */
export function serialOlder(a: number, b: number): boolean {
  return a !== b && (b - a) >>> 0 < 0x80000000;
}
