// Custom host names (spec.hostnames, and the fqdn annotation on a Service):
// names inside the zone that answer like the cluster-independent name. Which
// of the names asked for are served, and why the others are not. Pure.

export interface HostnameClaim {
  /** "namespace/name" of the GatewayDNS. */
  gatewayDns: string;
  /** RFC 3339; the older claim keeps a contested name. */
  createdAt: string;
  hostnames: string[];
}

export interface HostnameResult {
  served: string[];
  refused: { name: string; reason: string }[];
}

export function normalizeHostname(name: string): string {
  return name.trim().toLowerCase().replace(/\.+$/, '');
}

/**
 * A name is served when it is inside the zone, not under clusters.<suffix>
 * (the generated names of every team live there), and no older GatewayDNS,
 * in any namespace, asks for it in its spec.hostnames.
 */
export function customHostnames(
  self: HostnameClaim,
  requested: string[],
  suffix: string,
  others: HostnameClaim[],
): HostnameResult {
  const zone = normalizeHostname(suffix);
  const generated = `clusters.${zone}`;
  const served: string[] = [];
  const refused: HostnameResult['refused'] = [];
  for (const name of [...new Set(requested.map(normalizeHostname))].sort()) {
    if (!name.endsWith(`.${zone}`)) {
      refused.push({ name, reason: `outside the zone ${zone}` });
      continue;
    }
    if (name === generated || name.endsWith(`.${generated}`)) {
      refused.push({ name, reason: `under ${generated}, where names are generated` });
      continue;
    }
    const older = others.find(
      (o) =>
        o.gatewayDns !== self.gatewayDns &&
        o.hostnames.map(normalizeHostname).includes(name) &&
        (o.createdAt < self.createdAt || (o.createdAt === self.createdAt && o.gatewayDns < self.gatewayDns)),
    );
    if (older) {
      refused.push({ name, reason: `claimed by the older gatewaydns ${older.gatewayDns}` });
      continue;
    }
    served.push(name);
  }
  return { served, refused };
}

/** The fqdn annotation's names: one, or several separated by commas or spaces. */
export function annotatedHostnames(value: string | undefined): string[] {
  return (value ?? '')
    .split(/[\s,]+/)
    .map(normalizeHostname)
    .filter(Boolean);
}
