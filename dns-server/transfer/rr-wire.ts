// Resource records in wire form for zone transfers: uncompressed (RFC 1035
// section 4.1.4 allows it; RFC 3597 section 4 asks it for types a peer may not
// know), owner names in full, so that one record's octets are the same in
// every message and can be compared as they are (the journal's differences).
import { T, type RData, type RR } from '../zone/rr.js';

/** Appends `name` ("a.b", "" for the root) as uncompressed labels. */
export function writeName(out: number[], name: string): void {
  if (name !== '')
    for (const label of name.split('.')) {
      const bytes = Buffer.from(label, 'latin1');
      out.push(bytes.length);
      for (const b of bytes) out.push(b);
    }
  out.push(0);
}

/** The name's uncompressed wire form. */
export function nameWire(name: string): Buffer {
  const out: number[] = [];
  writeName(out, name);
  return Buffer.from(out);
}

function writeU16(out: number[], v: number): void {
  out.push((v >>> 8) & 0xff, v & 0xff);
}

function writeU32(out: number[], v: number): void {
  out.push((v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff);
}

function writeRData(out: number[], data: RData): void {
  switch (data.kind) {
    case 'bytes':
      for (const b of data.bytes) out.push(b);
      return;
    case 'name':
      writeName(out, data.target);
      return;
    case 'srv':
      writeU16(out, data.priority);
      writeU16(out, data.weight);
      writeU16(out, data.port);
      writeName(out, data.target);
      return;
    case 'soa':
      writeName(out, data.mname);
      writeName(out, data.rname);
      writeU32(out, data.serial);
      writeU32(out, data.refresh);
      writeU32(out, data.retry);
      writeU32(out, data.expire);
      writeU32(out, data.minimum);
      return;
  }
}

/** One record, class IN, in wire form. */
export function rrWire(rr: RR): Buffer {
  const out: number[] = [];
  writeName(out, rr.owner);
  writeU16(out, rr.type);
  writeU16(out, 1);
  writeU32(out, rr.ttl);
  const rdata: number[] = [];
  writeRData(rdata, rr.data);
  writeU16(out, rdata.length);
  for (const b of rdata) out.push(b);
  return Buffer.from(out);
}

/** The serial of an SOA record in wire form (its RDATA ends with serial and four more 32-bit fields). */
export function soaSerialOf(soa: Uint8Array): number {
  return Buffer.from(soa.buffer, soa.byteOffset, soa.byteLength).readUInt32BE(soa.byteLength - 20);
}

export { T };
