// Parses the values of a DNSRecord (the CRD's presentation form) into RDATA.
// The CRD validates most of this already; the server checks again because a
// records file, or an older CRD, may not have.
import { isIPv4, isIPv6 } from 'node:net';
import { NameError, parseName } from './name.js';
import { T, type RData } from './rr.js';

export class RecordError extends Error {}

/** The RDATA of one value of a record of `type`; throws RecordError saying why a value is unusable. */
export function parseValue(type: string, value: string): { type: number; data: RData } {
  if (typeof value !== 'string') throw new RecordError(`value ${JSON.stringify(value)} is not a string`);
  try {
    switch (type) {
      case 'A':
        if (!isIPv4(value)) throw new RecordError(`"${value}" is not an IPv4 address`);
        // Buffer.from takes small buffers from a shared pool: no ArrayBuffer of its own per address.
        return { type: T.A, data: { kind: 'bytes', bytes: Buffer.from(value.split('.').map(Number)) } };
      case 'AAAA':
        if (!isIPv6(value)) throw new RecordError(`"${value}" is not an IPv6 address`);
        return { type: T.AAAA, data: { kind: 'bytes', bytes: ipv6Bytes(value) } };
      case 'CNAME':
        return { type: T.CNAME, data: { kind: 'name', target: parseName(value, { wildcard: false }) } };
      case 'SRV':
        return { type: T.SRV, data: parseSrv(value) };
      case 'TXT':
        return { type: T.TXT, data: { kind: 'bytes', bytes: txtBytes(value) } };
      default:
        throw new RecordError(`type "${type}" is not one of A, AAAA, CNAME, SRV, TXT`);
    }
  } catch (err) {
    if (err instanceof NameError) throw new RecordError(err.message);
    throw err;
  }
}

/** RFC 2782: "priority weight port target", three 16-bit numbers and a name ("." means no service). */
function parseSrv(value: string): RData {
  const fields = value.trim().split(/\s+/);
  if (fields.length !== 4) throw new RecordError(`SRV value "${value}" is not "priority weight port target"`);
  const [priority, weight, port] = fields.slice(0, 3).map((f) => {
    if (!/^\d{1,5}$/.test(f) || Number(f) > 65535)
      throw new RecordError(`SRV value "${value}": "${f}" is not a number from 0 to 65535`);
    return Number(f);
  }) as [number, number, number];
  const rawTarget = fields[3]!;
  const target = rawTarget === '.' ? '' : parseName(rawTarget, { wildcard: false });
  return { kind: 'srv', priority, weight, port, target };
}

/** RFC 1035 section 3.3.14: character-strings of at most 255 octets; longer text is split. */
function txtBytes(value: string): Uint8Array {
  const text = Buffer.from(value, 'utf8');
  const chunks: Buffer[] = [];
  for (let i = 0; i === 0 || i < text.length; i += 255) {
    const part = text.subarray(i, i + 255);
    chunks.push(Buffer.from([part.length]), part);
  }
  const out = Buffer.concat(chunks);
  if (out.length > 65535) throw new RecordError('TXT value is longer than 65535 octets');
  return out;
}

function ipv6Bytes(address: string): Uint8Array {
  let text = address;
  const bytes = Buffer.alloc(16);
  // An embedded IPv4 tail ("::ffff:1.2.3.4") becomes two groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const groups =
    tail === undefined
      ? headGroups
      : [...headGroups, ...Array(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  groups.forEach((g: string, i: number) => {
    const n = parseInt(g, 16);
    bytes[i * 2] = n >> 8;
    bytes[i * 2 + 1] = n & 0xff;
  });
  return bytes;
}
