// Pure: a zone declared through the API (api/zone-declaration.ts) as the
// ZoneConfig the build compiles, its unset SOA and NS parameters taken from
// this dns-server's flags (--soa-*, --ns), as a --zone of the same name would
// have them. The zones of the flags win over a declared one of the same name.
import type { DeclaredZone } from '../../api/index.js';
import type { ZoneConfig } from './compile.js';

/** The SOA and NS flags, as every zone of this server gets them unless a declaration says otherwise. */
export interface ZoneDefaults {
  /** --soa-mname; ns1.<zone> when unset. */
  mname?: string;
  /** --soa-rname; hostmaster.<zone> when unset. */
  rname?: string;
  /** --ns; the MNAME when empty. */
  nameServers: string[];
  ttl: number;
  refresh: number;
  retry: number;
  expire: number;
  minimum: number;
}

/**
 * @param keyName the name of the zone's TSIG key, once read (sources/tsig-keys.ts): a zone declared
 *   with transfer is offered to its secondaries only with its key
 */
export function zoneConfigFor(declared: DeclaredZone, defaults: ZoneDefaults, keyName?: string): ZoneConfig {
  const name = normal(declared.name);
  const soa = declared.soa ?? {};
  const mname = normal(soa.mname ?? defaults.mname ?? `ns1.${name}`);
  const nameServers = declared.nameServers?.length ? declared.nameServers : defaults.nameServers;
  return {
    name,
    mname,
    rname: normal(soa.rname ?? defaults.rname ?? `hostmaster.${name}`),
    nameServers: nameServers.length ? nameServers.map(normal) : [mname],
    ...(declared.glue?.length
      ? { glue: declared.glue.map((g) => ({ name: normal(g.name), addresses: g.addresses })) }
      : {}),
    ...(declared.cuts?.length
      ? { cuts: declared.cuts.map((c) => ({ name: normal(c.name), nameServers: c.nameServers.map(normal) })) }
      : {}),
    ...(declared.transfer && keyName
      ? { transfer: { secondaries: declared.transfer.secondaries.map((s) => ({ ...s })), keyName } }
      : {}),
    ttl: soa.ttl ?? defaults.ttl,
    refresh: soa.refresh ?? defaults.refresh,
    retry: soa.retry ?? defaults.retry,
    expire: soa.expire ?? defaults.expire,
    minimum: soa.minimum ?? defaults.minimum,
  };
}

/**
 * What the server serves: the flags' zones, then each declared zone not named by a flag. A declared
 * zone inside or around a flag's is left out too (one server, one owner per name), except the
 * namespace parts a declared cut delegates; a declaration of a flag's zone itself lends it its NS
 * set, glue and cuts (ADR 0215), and its transfer where the flags give none (ADR 0216). Declared zones nest freely with each other.
 */
export function servedZones(
  flagZones: readonly ZoneConfig[],
  declared: readonly DeclaredZone[],
  defaults: ZoneDefaults,
  /** The TSIG key name of each zone declared with transfer whose key is read, by zone name (normalized). */
  keyNames: ReadonlyMap<string, string> = new Map(),
): { zones: ZoneConfig[]; ignored: string[] } {
  const overlaps = (a: string, b: string) => a === b || a.endsWith(`.${b}`) || b.endsWith(`.${a}`);
  const zones = [...flagZones];
  const ignored: string[] = [];
  // The namespace parts of exposed zones (ADR 0215): zones of their own behind a declared cut.
  const parts = new Set(declared.flatMap((d) => (d.cuts ?? []).map((c) => normal(c.name))));
  for (const d of declared) {
    const z = zoneConfigFor(d, defaults, keyNames.get(normal(d.name)));
    const flag = zones.findIndex((f) => f.name === z.name && flagZones.includes(f));
    // A DNSZone exposing a zone of the flags gives it its NS set, glue and cuts, and its transfer
    // unless the flags give one (--transfer-secondary wins, ADR 0216); the SOA stays the flags'.
    const lentTransfer = flag >= 0 && z.transfer && !zones[flag]!.transfer ? z.transfer : undefined;
    if (flag >= 0 && (d.nameServers?.length || d.glue?.length || d.cuts?.length || lentTransfer)) {
      zones[flag] = {
        ...zones[flag]!,
        ...(d.nameServers?.length ? { nameServers: z.nameServers } : {}),
        ...(z.glue ? { glue: z.glue } : {}),
        ...(z.cuts ? { cuts: z.cuts } : {}),
        ...(lentTransfer ? { transfer: lentTransfer } : {}),
      };
      continue;
    }
    // Declared zones may nest (a namespace's part inside its zone: the longer zone answers its
    // names); otherwise a flag's zone keeps every name it or a declared zone nested with it would hold.
    if (flagZones.some((f) => overlaps(f.name, z.name)) && !parts.has(z.name)) ignored.push(z.name);
    else zones.push(z);
  }
  return { zones, ignored };
}

function normal(name: string): string {
  return name.trim().toLowerCase().replace(/\.+$/, '');
}
