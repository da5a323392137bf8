// The zones declared once, on the management cluster (DNSZone), as the
// operator tells them to every workload cluster's dns-server: one ConfigMap,
// capi-dns-zones, in the records namespace, key zones.json (ADR 0213). The
// dns-server serves them beside the zones of its flags (--zone), which win
// where both name a zone. Parsed strictly: a declaration that is not one is
// refused whole, and the zones served before stay.
import { isIP } from 'node:net';
import { dnsZoneNameProblem } from './dns-name.js';

export const ZONES_CONFIGMAP = 'capi-dns-zones';
export const ZONES_CONFIGMAP_KEY = 'zones.json';
/**
 * The dns-server's Service reachable from outside the cluster (type LoadBalancer; config/ and the
 * chart make it, off by default): the operator reads its load-balancer addresses as the glue of
 * the zones with spec.nameservers.expose (ADR 0215).
 */
export const EXPOSED_DNS_SERVICE = 'capi-dns-server-external';
/** On the ConfigMap: the operator's watch of it selects by this label. */
export const ZONES_CONFIGMAP_LABEL = 'connectivity.tanzu.vmware.com/zones';

/** SOA parameters a DNSZone may set; the dns-server's own (--soa-*) fill in the others. */
export interface SoaParameters {
  mname?: string;
  rname?: string;
  ttl?: number;
  refresh?: number;
  retry?: number;
  expire?: number;
  minimum?: number;
}

/**
 * The one Secret, in each workload cluster's records namespace, that holds the signing keys of the
 * signed zones the operator declares (ADR 0106): one name, so that the dns-server's Role can name
 * it (resourceNames) and no other Secret is readable.
 */
export const DNSSEC_KEYS_SECRET = 'capi-dns-dnssec-keys';

/**
 * The one Secret, in each workload cluster's records namespace, that holds the TSIG keys of the
 * zones the operator declares with transfer (ADR 0216): one data key per zone (its name), the
 * key as tsig-keygen writes it; one name, so that the dns-server's Role can name it.
 */
export const TSIG_KEYS_SECRET = 'capi-dns-tsig-keys';

/** A secondary of a declared zone: sent NOTIFY, allowed to transfer it. */
export interface Secondary {
  address: string;
  port: number;
}

export interface DeclaredZone {
  name: string;
  soa?: SoaParameters;
  /** The zone's NS records; the dns-server's --ns (or the SOA MNAME) when unset. */
  nameServers?: string[];
  /**
   * Addresses of in-zone name servers (the exposed dns-servers, ADR 0215): served as A and AAAA
   * records at those names, so that a resolver outside the fleet can reach them.
   */
  glue?: Glue[];
  /**
   * Zone cuts (ADR 0215): parts of the zone delegated to other name servers (a namespace's part,
   * served by its own clusters as a zone of its own). Answered as referrals.
   */
  cuts?: ZoneCut[];
  /** Signed (ADR 0106): the PKCS#8 PEM private key is `key` of the Secret `secret` in the records namespace. */
  dnssec?: { secret: string; key: string };
  /**
   * Zone transfer (ADR 0216): these secondaries, the TSIG key being the zone's name as data key of
   * the Secret `tsigSecret` in the records namespace.
   */
  transfer?: { secondaries: Secondary[]; tsigSecret: string };
}

export interface ZoneCut {
  name: string;
  nameServers: string[];
}

export interface Glue {
  name: string;
  addresses: string[];
}

export class ZoneDeclarationError extends Error {}

const SOA_NUMBERS = ['ttl', 'refresh', 'retry', 'expire', 'minimum'] as const;

/** The ConfigMap's text for these zones: sorted, so the same zones give the same text. */
export function zoneDeclarationText(zones: readonly DeclaredZone[]): string {
  return `${JSON.stringify({ zones: [...zones].sort((a, b) => a.name.localeCompare(b.name)) }, null, 2)}\n`;
}

export function parseZoneDeclaration(text: string): DeclaredZone[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ZoneDeclarationError(`not JSON: ${(err as Error).message}`);
  }
  const zones = (doc as { zones?: unknown })?.zones;
  if (!Array.isArray(zones)) throw new ZoneDeclarationError('no "zones" list');
  const seen = new Set<string>();
  return zones.map((z: unknown, i): DeclaredZone => {
    const at = `zones[${i}]`;
    if (typeof z !== 'object' || z === null) throw new ZoneDeclarationError(`${at}: not an object`);
    const { name, soa, nameServers, glue, cuts, dnssec, transfer } = z as Record<string, unknown>;
    if (typeof name !== 'string') throw new ZoneDeclarationError(`${at}: no name`);
    const problem = dnsZoneNameProblem(name);
    if (problem) throw new ZoneDeclarationError(`${at}: "${name}" is not a DNS name: it ${problem}`);
    if (seen.has(name)) throw new ZoneDeclarationError(`${at}: ${name} twice`);
    seen.add(name);
    const out: DeclaredZone = { name };
    if (soa !== undefined) {
      if (typeof soa !== 'object' || soa === null) throw new ZoneDeclarationError(`${at}.soa: not an object`);
      const s = soa as Record<string, unknown>;
      const parsed: SoaParameters = {};
      for (const key of ['mname', 'rname'] as const)
        if (s[key] !== undefined) {
          const v = s[key];
          if (typeof v !== 'string' || dnsZoneNameProblem(v))
            throw new ZoneDeclarationError(`${at}.soa.${key}: not a DNS name`);
          parsed[key] = v;
        }
      for (const key of SOA_NUMBERS)
        if (s[key] !== undefined) {
          const v = s[key];
          if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 2 ** 31 - 1)
            throw new ZoneDeclarationError(`${at}.soa.${key}: not an integer from 0 to 2147483647`);
          parsed[key] = v;
        }
      out.soa = parsed;
    }
    if (nameServers !== undefined) {
      if (
        !Array.isArray(nameServers) ||
        nameServers.some((n) => typeof n !== 'string' || dnsZoneNameProblem(n))
      )
        throw new ZoneDeclarationError(`${at}.nameServers: not a list of DNS names`);
      out.nameServers = nameServers as string[];
    }
    if (glue !== undefined) out.glue = parseGlue(glue, name, `${at}.glue`);
    if (cuts !== undefined) out.cuts = parseCuts(cuts, name, `${at}.cuts`);
    if (dnssec !== undefined) {
      const d = dnssec as Record<string, unknown> | null;
      // Secret names are DNS subdomains; data keys are [-._a-zA-Z0-9]+ (Kubernetes' own rules).
      if (
        typeof d !== 'object' ||
        d === null ||
        typeof d.secret !== 'string' ||
        dnsZoneNameProblem(d.secret) ||
        d.secret !== d.secret.toLowerCase() ||
        typeof d.key !== 'string' ||
        !/^[-._a-zA-Z0-9]{1,253}$/.test(d.key)
      )
        throw new ZoneDeclarationError(`${at}.dnssec: not {secret: <Secret name>, key: <data key>}`);
      out.dnssec = { secret: d.secret, key: d.key };
    }
    if (transfer !== undefined) out.transfer = parseTransfer(transfer, `${at}.transfer`);
    return out;
  });
}

function parseTransfer(transfer: unknown, at: string): NonNullable<DeclaredZone['transfer']> {
  const { secondaries, tsigSecret } = (
    typeof transfer === 'object' && transfer !== null ? transfer : {}
  ) as Record<string, unknown>;
  if (typeof tsigSecret !== 'string' || !isSecretName(tsigSecret))
    throw new ZoneDeclarationError(`${at}.tsigSecret: not a Secret name`);
  if (!Array.isArray(secondaries) || !secondaries.length)
    throw new ZoneDeclarationError(`${at}.secondaries: not a non-empty list`);
  return {
    secondaries: secondaries.map((s: unknown, i): Secondary => {
      const { address, port } = (typeof s === 'object' && s !== null ? s : {}) as Record<string, unknown>;
      if (typeof address !== 'string' || !isIP(address))
        throw new ZoneDeclarationError(`${at}.secondaries[${i}].address: not an IP address`);
      if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)
        throw new ZoneDeclarationError(`${at}.secondaries[${i}].port: not a port from 1 to 65535`);
      return { address, port };
    }),
    tsigSecret,
  };
}

/** A Secret's name: a lower-case DNS subdomain (Kubernetes' rule). */
function isSecretName(name: string): boolean {
  return !dnsZoneNameProblem(name) && name === name.toLowerCase() && !name.endsWith('.');
}

function parseGlue(glue: unknown, zone: string, at: string): Glue[] {
  if (!Array.isArray(glue)) throw new ZoneDeclarationError(`${at}: not a list`);
  return glue.map((g: unknown, i): Glue => {
    const here = `${at}[${i}]`;
    const { name, addresses } = (typeof g === 'object' && g !== null ? g : {}) as Record<string, unknown>;
    if (typeof name !== 'string' || dnsZoneNameProblem(name))
      throw new ZoneDeclarationError(`${here}.name: not a DNS name`);
    const lower = name.toLowerCase().replace(/\.$/, '');
    if (lower !== zone.toLowerCase() && !lower.endsWith(`.${zone.toLowerCase()}`))
      throw new ZoneDeclarationError(`${here}.name: ${name} is outside the zone ${zone}`);
    if (
      !Array.isArray(addresses) ||
      !addresses.length ||
      addresses.some((a) => typeof a !== 'string' || !isIP(a))
    )
      throw new ZoneDeclarationError(`${here}.addresses: not a non-empty list of IP addresses`);
    return { name, addresses: addresses as string[] };
  });
}

function parseCuts(cuts: unknown, zone: string, at: string): ZoneCut[] {
  if (!Array.isArray(cuts)) throw new ZoneDeclarationError(`${at}: not a list`);
  const apex = zone.toLowerCase().replace(/\.$/, '');
  return cuts.map((c: unknown, i): ZoneCut => {
    const here = `${at}[${i}]`;
    const { name, nameServers } = (typeof c === 'object' && c !== null ? c : {}) as Record<string, unknown>;
    if (typeof name !== 'string' || dnsZoneNameProblem(name))
      throw new ZoneDeclarationError(`${here}.name: not a DNS name`);
    if (!name.toLowerCase().replace(/\.$/, '').endsWith(`.${apex}`))
      throw new ZoneDeclarationError(`${here}.name: ${name} is not below the zone ${zone}`);
    if (
      !Array.isArray(nameServers) ||
      !nameServers.length ||
      nameServers.some((n) => typeof n !== 'string' || dnsZoneNameProblem(n))
    )
      throw new ZoneDeclarationError(`${here}.nameServers: not a non-empty list of DNS names`);
    return { name, nameServers: nameServers as string[] };
  });
}
