// The records of a transfer, as a stream of DNS messages: AXFR (RFC 5936
// section 2.2: SOA, every record, SOA) and IXFR (RFC 1995 section 4: the new
// SOA, then per difference the old SOA, what was deleted, the new SOA, what
// was added, and the new SOA again). Messages are made one at a time as the
// connection asks for them, so a zone of any size holds one message of memory
// per transfer. Pure.
import { recordAt, recordCount, type TransferImage } from './image.js';
import type { Difference } from './journal.js';

/**
 * Octets of records per message. RFC 5936 section 2.2 lets a message hold up to 65,535; a smaller
 * one leaves room for the TSIG and keeps each write under the TCP path's high-water mark, so that
 * a secondary that stops reading stops the stream after one message.
 */
export const MESSAGE_OCTETS = 16_000;

export function* axfrRecords(image: TransferImage): Generator<Uint8Array> {
  yield image.soa;
  for (let i = 0; i < recordCount(image); i++) yield recordAt(image, i);
  yield image.soa;
}

/** RFC 1995 section 4, one (condensed) difference. */
export function* ixfrRecords(image: TransferImage, d: Difference): Generator<Uint8Array> {
  yield image.soa;
  yield d.fromSoa;
  yield* d.deleted;
  yield d.toSoa;
  yield* d.added;
  yield image.soa;
}

/** The client is current (its serial is not older than ours): our SOA alone (RFC 1995 section 2). */
export function* soaOnly(image: TransferImage): Generator<Uint8Array> {
  yield image.soa;
}

/**
 * Packs records into response messages: each with the request's ID, QR and AA, the question as
 * asked in the first only (RFC 5936 section 2.2.1 allows it in the others, none requires it).
 */
export function* messagesOf(
  request: Buffer,
  questionEnd: number,
  records: Iterable<Uint8Array>,
  maxOctets = MESSAGE_OCTETS,
): Generator<Buffer> {
  let batch: Uint8Array[] = [];
  let octets = 0;
  let first = true;
  const flush = (): Buffer => {
    const question = first ? request.subarray(12, questionEnd) : Buffer.alloc(0);
    const out = Buffer.allocUnsafe(12 + question.length + octets);
    request.copy(out, 0, 0, 2);
    out[2] = 0x84 | (request[2]! & 0x01); // QR, AA, opcode QUERY, RD copied
    out[3] = 0;
    out.writeUInt16BE(first ? 1 : 0, 4);
    out.writeUInt16BE(batch.length, 6);
    out.writeUInt32BE(0, 8);
    question.copy(out, 12);
    let at = 12 + question.length;
    for (const r of batch) {
      out.set(r, at);
      at += r.length;
    }
    first = false;
    batch = [];
    octets = 0;
    return out;
  };
  for (const r of records) {
    if (batch.length > 0 && octets + r.length > maxOctets) yield flush();
    batch.push(r);
    octets += r.length;
  }
  if (batch.length > 0 || first) yield flush();
}

/** A response with no records, `rcode`, the question as asked. */
export function errorMessage(request: Buffer, questionEnd: number, rcode: number): Buffer {
  const out = Buffer.alloc(questionEnd);
  request.copy(out, 0, 0, questionEnd);
  out[2] = 0x80 | (request[2]! & 0x79);
  out[3] = rcode & 0x0f;
  out.writeUInt16BE(questionEnd > 12 ? 1 : 0, 4);
  out.writeUInt32BE(0, 6);
  out.writeUInt16BE(0, 10);
  return out;
}
