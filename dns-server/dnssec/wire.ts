// Canonical wire forms (RFC 4034 section 6): names uncompressed and in lower
// case, record data as it is signed. The zone stores names lower case already.
import type { RData } from '../zone/rr.js';

/** RR types DNSSEC adds (RFC 4034 section 2–4). */
export const DNSSEC_T = { RRSIG: 46, NSEC: 47, DNSKEY: 48 } as const;

/** A name in uncompressed wire form: "a.b" → 01 61 01 62 00; the root "" → 00. */
export function nameWire(name: string): Buffer {
  if (name === '') return Buffer.from([0]);
  const out = Buffer.alloc(name.length + 2);
  let at = 0;
  for (const label of name.split('.')) {
    out[at++] = label.length;
    at += out.write(label, at, 'latin1');
  }
  out[at] = 0;
  return out;
}

/** Labels of an owner, neither the root nor a leading "*" counted (RFC 4034 section 3.1.3). */
export function labelCount(name: string): number {
  if (name === '') return 0;
  const labels = name.split('.').length;
  return name === '*' || name.startsWith('*.') ? labels - 1 : labels;
}

/** RDATA in canonical form: names uncompressed (RFC 4034 section 6.2; SRV targets included). */
export function rdataWire(data: RData): Buffer {
  switch (data.kind) {
    case 'bytes':
      return Buffer.from(data.bytes);
    case 'name':
      return nameWire(data.target);
    case 'srv': {
      const head = Buffer.alloc(6);
      head.writeUInt16BE(data.priority, 0);
      head.writeUInt16BE(data.weight, 2);
      head.writeUInt16BE(data.port, 4);
      return Buffer.concat([head, nameWire(data.target)]);
    }
    case 'soa': {
      const tail = Buffer.alloc(20);
      [data.serial, data.refresh, data.retry, data.expire, data.minimum].forEach((v, i) =>
        tail.writeUInt32BE(v >>> 0, i * 4),
      );
      return Buffer.concat([nameWire(data.mname), nameWire(data.rname), tail]);
    }
  }
}

/** One resource record in uncompressed wire form (owner, type, class IN, TTL, RDLENGTH, RDATA). */
export function recordWire(owner: string, type: number, ttl: number, rdata: Uint8Array): Buffer {
  const name = nameWire(owner);
  const out = Buffer.alloc(name.length + 10 + rdata.length);
  name.copy(out, 0);
  const at = name.length;
  out.writeUInt16BE(type, at);
  out.writeUInt16BE(1, at + 2);
  out.writeUInt32BE(ttl >>> 0, at + 4);
  out.writeUInt16BE(rdata.length, at + 8);
  out.set(rdata, at + 10);
  return out;
}

/**
 * A key whose string order is the canonical DNS name order (RFC 4034 section 6.1): labels from the
 * rightmost, each compared as octets, a shorter label (and a parent) first. The separator "\x00"
 * sorts below every octet a label of the zone can hold.
 */
export function canonicalKey(name: string): string {
  return name === '' ? '' : name.split('.').reverse().join('\x00');
}
