// A server block key as CoreDNS reads it (core/dnsserver/address.go):
// [scheme://]zone[:port]. Only what telling zones and ports apart needs.

export type Transport = 'dns' | 'tls' | 'quic' | 'grpc' | 'https' | 'https3' | 'unknown';

export interface Address {
  /** The key as written, without a trailing comma. */
  raw: string;
  transport: Transport;
  /** Lower case with a trailing dot (`.` for the root); undefined when it hides behind `{$VAR}`. */
  zone: string | undefined;
  /** The port as written, undefined when the key names none (CoreDNS then uses its default, 53 for dns). */
  port: string | undefined;
}

const SCHEMES: Record<string, Transport> = {
  dns: 'dns',
  tls: 'tls',
  quic: 'quic',
  grpc: 'grpc',
  https: 'https',
  https3: 'https3',
};

export function parseAddress(raw: string): Address {
  let rest = raw;
  let transport: Transport = 'dns';
  const scheme = /^([a-z0-9]+):\/\//i.exec(rest);
  if (scheme) {
    transport = SCHEMES[(scheme[1] as string).toLowerCase()] ?? 'unknown';
    rest = rest.slice(scheme[0].length);
  }
  let port: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon !== -1) {
    port = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  const zone = rest.includes('{') ? undefined : normalizeZone(rest);
  return { raw, transport, zone, port };
}

/** `Example.ORG` and `example.org.` are one zone to CoreDNS; `.` is the root. */
export function normalizeZone(zone: string): string {
  const z = zone.toLowerCase();
  if (z === '' || z === '.') return '.';
  return z.endsWith('.') ? z : `${z}.`;
}

/** Whether two keys name the same plain-DNS zone and port, which CoreDNS refuses to serve twice. */
export function sameDnsZoneAndPort(a: Address, b: Address): boolean {
  if (a.transport !== 'dns' || b.transport !== 'dns') return false;
  if (a.zone === undefined || a.zone !== b.zone) return false;
  // A key without a port gets -dns.port (53 unless changed): count it as 53.
  return (a.port ?? '53') === (b.port ?? '53');
}
