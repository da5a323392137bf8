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
 * The name's labels from the rightmost, each as its length octet and its octets (a "." inside a
 * label, written "\x00" in the zone's names, as the octet it is): the form in which the canonical
 * DNS name order (RFC 4034 section 6.1) is `compareCanonical`, and in which the responder compares
 * a query's wire name without making a string.
 */
export function canonicalLabels(name: string): Uint8Array {
  if (name === '') return new Uint8Array(0);
  const labels = name.split('.').reverse();
  const out = new Uint8Array(labels.reduce((n, l) => n + 1 + l.length, 0));
  let at = 0;
  for (const label of labels) {
    out[at++] = label.length;
    for (let i = 0; i < label.length; i++) {
      const c = label.charCodeAt(i);
      out[at++] = c === 0 ? 0x2e : c;
    }
  }
  return out;
}

/** RFC 4034 section 6.1 over two canonicalLabels: labels from the rightmost as octets, a parent first. */
export function compareCanonical(a: Uint8Array, b: Uint8Array): number {
  let i = 0;
  let j = 0;
  for (;;) {
    if (i === a.length) return j === b.length ? 0 : -1;
    if (j === b.length) return 1;
    const la = a[i]!;
    const lb = b[j]!;
    const n = la < lb ? la : lb;
    for (let k = 1; k <= n; k++) if (a[i + k] !== b[j + k]) return a[i + k]! < b[j + k]! ? -1 : 1;
    if (la !== lb) return la < lb ? -1 : 1;
    i += 1 + la;
    j += 1 + lb;
  }
}
