// Two-octet fields of a DNS message, big-endian (RFC 1035 section 2.3.2), at an
// offset the caller has checked is inside the buffer. Buffer's readUInt16BE and
// writeUInt16BE check again and are calls; on the query path they were
// fourteen a DO=1 query (ADR 0106, amended).

export function u16(b: Uint8Array, at: number): number {
  return (b[at]! << 8) | b[at + 1]!;
}

export function setU16(b: Uint8Array, at: number, v: number): void {
  b[at] = v >>> 8;
  b[at + 1] = v;
}
