// Domain names as the zone stores them: lower case, no final dot, labels
// separated by "." (so the root is ""). DNS matching is case-insensitive
// (RFC 1035 section 2.3.3, RFC 4343); the wire layer echoes the case asked.

/** Letters, digits, "_" and "-" as the CRD's pattern allows; "*" only as a whole first label (RFC 4592). */
const LABEL = /^[a-z0-9_]([-a-z0-9_]{0,61}[a-z0-9_])?$/;

export class NameError extends Error {}

/** Lower-cases a name and drops the final dot: "Foo.XCC.test." → "foo.xcc.test". */
export function normalizeName(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/**
 * Checks and normalises an owner or target name. Throws NameError saying what is wrong.
 * Limits are RFC 1035 section 2.3.4: labels of 1 to 63 octets, 255 octets on the wire.
 */
export function parseName(raw: string, opts: { wildcard: boolean }): string {
  const name = normalizeName(raw.trim());
  if (name === '') throw new NameError(`"${raw}" is not a name`);
  const labels = name.split('.');
  labels.forEach((label, i) => {
    if (label === '*' && i === 0 && opts.wildcard) return;
    if (!LABEL.test(label)) throw new NameError(`"${raw}": label "${label}" is not a valid label`);
  });
  if (wireLength(name) > 255) throw new NameError(`"${raw}" is longer than 255 octets`);
  return name;
}

/** Octets the name takes on the wire, uncompressed: one length octet per label, plus the root octet. */
export function wireLength(name: string): number {
  return name === '' ? 1 : name.length + 2;
}

/** The name without its first label: "a.b.c" → "b.c", "c" → "" (the root). */
export function parentName(name: string): string {
  const dot = name.indexOf('.');
  return dot < 0 ? '' : name.slice(dot + 1);
}

/** True if name is zone or below it. */
export function isInZone(name: string, zone: string): boolean {
  return name === zone || (name.endsWith(zone) && name.charCodeAt(name.length - zone.length - 1) === 46);
}

export function isWildcard(name: string): boolean {
  return name === '*' || name.startsWith('*.');
}
