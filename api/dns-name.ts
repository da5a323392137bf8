// What a zone name (and a name server's) must be, for both programs: labels of
// letters, digits and inner hyphens, 1–63 octets each, 253 in all.
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** Why `name` (lower-cased, without a final dot) is not a DNS name, or undefined when it is one. */
export function dnsZoneNameProblem(name: string): string | undefined {
  const n = name.trim().toLowerCase().replace(/\.+$/, '');
  if (!n) return 'is empty';
  if (n.length > 253) return 'is longer than 253 characters';
  const bad = n.split('.').find((l) => !LABEL.test(l));
  if (bad !== undefined) return `has the label "${bad}": labels are 1–63 letters, digits and inner hyphens`;
  return undefined;
}
