// A zone as a transfer reads it: its SOA and every other record in wire
// form, packed in one buffer (transferable from the build thread without a
// copy, and no JS object per record on the threads that serve transfers).
// Made by the build, from the compiled zone, for the zones that have
// secondaries.
import type { Zone } from '../zone/zone.js';
import { rrWire } from './rr-wire.js';
import { transferRecordsOf } from './zone-records.js';
import type { SignedZone } from '../dnssec/signed-zone.js';

export interface Secondary {
  address: string;
  /** Default 53. */
  port: number;
}

/** What a zone declares about its transfers (the DNSZone's spec.transfer, or the flags). */
export interface TransferConfig {
  secondaries: Secondary[];
  /** The TSIG key that every transfer and NOTIFY of the zone is signed with (RFC 8945). */
  keyName: string;
}

export interface TransferImage {
  zone: string;
  serial: number;
  config: TransferConfig;
  /** The apex SOA record, in wire form. */
  soa: Uint8Array;
  /** Every other record, in wire form, one after the other; offsets[i] is where record i starts. */
  records: Uint8Array;
  offsets: Uint32Array;
}

/** @param signed the zone as signed, when it is (ADR 0106): its RRSIGs, NSECs and DNSKEY go with it */
export function transferImageOf(zone: Zone, config: TransferConfig, signed?: SignedZone): TransferImage {
  const { soa, records } = transferRecordsOf(zone, signed);
  const wires = records.map(rrWire);
  const offsets = new Uint32Array(wires.length + 1);
  let total = 0;
  wires.forEach((w, i) => {
    offsets[i] = total;
    total += w.length;
  });
  offsets[wires.length] = total;
  const packed = new Uint8Array(total);
  wires.forEach((w, i) => packed.set(w, offsets[i]!));
  const soaData = soa.data;
  return {
    zone: zone.name,
    serial: soaData.kind === 'soa' ? soaData.serial : 0,
    config,
    soa: new Uint8Array(rrWire(soa)),
    records: packed,
    offsets,
  };
}

/** Number of records other than the SOA. */
export function recordCount(image: TransferImage): number {
  return image.offsets.length - 1;
}

/** Record i's octets (a view, no copy). */
export function recordAt(image: TransferImage, i: number): Buffer {
  return Buffer.from(
    image.records.buffer,
    image.records.byteOffset + image.offsets[i]!,
    image.offsets[i + 1]! - image.offsets[i]!,
  );
}

/** The ArrayBuffers to transfer with the images. */
export function imageBuffers(images: TransferImage[]): ArrayBuffer[] {
  return images.flatMap((i) => [
    i.records.buffer as ArrayBuffer,
    i.offsets.buffer as ArrayBuffer,
    i.soa.buffer as ArrayBuffer,
  ]);
}
