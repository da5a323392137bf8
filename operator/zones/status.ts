// Pure: a DNSZone, the other DNSZones, and the custom names every GatewayDNS
// serves (their status.hostnames) → the DNSZone's status: the delegations in
// force (status.enforced), its conditions, which namespaces hold which of its
// names, and in Audit what Enforce would withdraw. Bad input leaves the
// delegations in force as they were: nothing served changes (ADR 0213).
import {
  TSIG_KEYS_SECRET,
  type Condition,
  type DeclaredZone,
  type DNSZone,
  type DNSZoneStatus,
  type EnforcedZone,
} from '../../api/index.js';
import {
  removeCondition,
  setCondition,
  setConditionWhile,
  ZONE_CONDITIONS,
  ZONE_REASONS,
  type ConditionInput,
} from '../model/conditions.js';
import {
  checkZoneSpec,
  governingZone,
  inZone,
  normalizeName,
  verdictFor,
  type GoverningZone,
} from '../model/delegation.js';
import { namedFirst } from '../manager/runtime/summary.js';
import type { ZoneNameservers } from './nameservers.js';
import type { ZoneKeyRead } from './keys.js';
import { transferCondition, transferInForce, type TransferVerdict } from './transfer.js';

/** A GatewayDNS as the zone reads it: its namespace and the custom names it serves. */
export interface ServedNames {
  gatewayDns: string;
  namespace: string;
  hostnames: readonly string[];
}

export interface ZoneStatusInput {
  zone: DNSZone;
  /** Every DNSZone, this one included. */
  zones: readonly DNSZone[];
  served: readonly ServedNames[];
  namespaceLabels: (namespace: string) => Record<string, string> | undefined;
  /** Per workload cluster: whether its dns-server is told to serve the zone (empty: none known yet). */
  clusters?: DNSZoneStatus['clusters'];
  /** With spec.nameservers.expose in force: the exposed dns-servers that are its NS now. */
  nameservers?: ZoneNameservers;
  /** With spec.dnssec.enabled: its key as read this pass (unset: not read, status.ds stays). */
  key?: ZoneKeyRead;
  /** spec.transfer checked with its Secret this pass (transfer.ts); undefined: as it was. */
  transfer?: TransferVerdict;
  now: Date;
}

/** Older first: of two DNSZones for one zone, the older governs. */
export function olderFirst(a: DNSZone, b: DNSZone): number {
  return (
    new Date(a.metadata.creationTimestamp ?? 0).getTime() -
      new Date(b.metadata.creationTimestamp ?? 0).getTime() || a.metadata.name.localeCompare(b.metadata.name)
  );
}

/** The zones in force, oldest first, as the GatewayDNS claims read them: being deleted governs nothing. */
export function zonesInForce(zones: readonly DNSZone[]): GoverningZone[] {
  return [...zones]
    .filter((z) => !z.metadata.deletionTimestamp && z.status?.enforced)
    .sort(olderFirst)
    .map((z) => ({ name: z.metadata.name, enforced: z.status!.enforced! }));
}

export function zoneStatus(input: ZoneStatusInput): DNSZoneStatus {
  const { zone, now } = input;
  const generation = zone.metadata.generation;
  const previous = zone.status;
  const holdersNow = holdersOf(zone.metadata.name, input);
  const check = checkZoneSpec(zone.spec, generation, {
    holders: holdersNow,
    namespaceLabels: input.namespaceLabels,
  });
  const duplicate = olderDuplicateOf(zone, input.zones);
  const refusal = check.errors.length
    ? {
        reason: ZONE_REASONS.Invalid,
        message: `refused, the delegations in force stay: ${check.errors.join('; ')}`,
      }
    : duplicate
      ? {
          reason: ZONE_REASONS.DuplicateZone,
          message: `DNSZone ${duplicate} declares the zone ${normalizeName(zone.spec.zone)} and is older: it governs, this one does not`,
        }
      : undefined;
  const enforced: EnforcedZone | undefined = refusal
    ? previous?.enforced
    : withTransfer(check.enforced, input);
  // What the other zones take: a child zone's names are its own (the more specific zone governs).
  const inside = enforced ? childZones(zone, enforced, input.zones) : [];
  const shadowed = (enforced?.delegations ?? []).flatMap((d) =>
    d.hostnames.flatMap((p) => {
      const child = inside.find((c) => inZone(p.replace(/^\*\./, ''), c.zone));
      return child ? [`${p} is inside zone ${child.zone}, which DNSZone ${child.name} governs`] : [];
    }),
  );
  const notes = [...(refusal ? [] : check.refused), ...shadowed];
  const withThis = enforced
    ? zonesInForce(
        input.zones.map((z) =>
          z.metadata.name === zone.metadata.name ? { ...z, status: { ...z.status, enforced } } : z,
        ),
      )
    : [];
  const audit = enforced?.enforcement === 'Audit' ? auditOf(zone.metadata.name, withThis, input) : [];
  const clusters = input.clusters ?? previous?.clusters ?? [];
  const unserved = clusters.filter((c) => !c.served);
  const ready: Omit<ConditionInput, 'type'> = zone.metadata.deletionTimestamp
    ? { status: 'False', reason: ZONE_REASONS.Deleting, message: 'withdrawing the names it governed' }
    : refusal
      ? { status: 'False', ...refusal }
      : unserved.length
        ? {
            status: 'False',
            reason: ZONE_REASONS.ClusterUnreachable,
            message: `not declared to ${namedFirst(unserved.map((c) => `${c.cluster}${c.message ? ` (${c.message})` : ''}`))}`,
          }
        : {
            status: 'True',
            reason: ZONE_REASONS.Ready,
            message: `zone ${enforced?.zone} in force (${enforced?.enforcement}) with ${enforced?.delegations.length ?? 0} delegation(s)${inside.length ? `; names under ${inside.map((c) => c.zone).join(', ')} are governed by DNSZone ${inside.map((c) => c.name).join(', ')}` : ''}`,
          };
  let conditions = setCondition(
    previous?.conditions,
    { type: ZONE_CONDITIONS.Ready, ...ready, observedGeneration: generation },
    now,
  );
  conditions = refusal
    ? removeCondition(conditions, ZONE_CONDITIONS.DelegationsAccepted)
    : setCondition(
        conditions,
        {
          type: ZONE_CONDITIONS.DelegationsAccepted,
          ...(notes.length
            ? {
                status: 'False',
                reason: ZONE_REASONS.Overlapping,
                message: `not in force: ${notes.join('; ')}`,
              }
            : { status: 'True', reason: ZONE_REASONS.Accepted, message: 'every delegation is in force' }),
          observedGeneration: generation,
        },
        now,
      );
  conditions = exposedCondition(conditions, enforced, input.nameservers, generation, now);
  const signing = zone.spec.dnssec?.enabled === true;
  conditions = signedCondition(conditions, signing, input.key, generation, now);
  const ds = !signing ? [] : input.key && 'info' in input.key ? [input.key.info.ds] : (previous?.ds ?? []);
  const parentRecords =
    input.nameservers?.parentRecords ?? (enforced?.expose ? (previous?.parentRecords ?? []) : []);
  conditions = transferCondition(conditions, zone.spec.transfer, input.transfer, generation, now);
  return {
    observedGeneration: generation,
    conditions,
    ...(enforced ? { enforced } : {}),
    // Emptied rather than left out once set: the status is written as a merge patch.
    holders: holdersNow,
    audit,
    clusters,
    nameservers: input.nameservers?.servers ?? (enforced?.expose ? (previous?.nameservers ?? []) : []),
    zoneCuts: input.nameservers?.cuts ?? (enforced?.expose ? (previous?.zoneCuts ?? []) : []),
    // The DS goes to the parent beside the NS and glue (RFC 4034 section 5).
    parentRecords:
      input.nameservers && enforced ? [...parentRecords, ...dsRecords(enforced.zone, ds)] : parentRecords,
    ds,
  };
}

function dsRecords(zone: string, ds: readonly string[]): string[] {
  return ds.map((d) => `${zone}. IN DS ${d}`);
}

/** Signed, while spec.dnssec.enabled: the key read, or why not (left as it was when not read this pass). */
function signedCondition(
  conditions: Condition[],
  signing: boolean,
  key: ZoneKeyRead | undefined,
  generation: number | undefined,
  now: Date,
): Condition[] {
  return setConditionWhile(
    conditions,
    signing,
    ZONE_CONDITIONS.Signed,
    key && {
      ...('info' in key
        ? {
            status: 'True',
            reason: ZONE_REASONS.KeySigned,
            message: `signed with ${key.info.algorithm} key ${key.info.keyTag}; DS ${key.info.ds}`,
          }
        : {
            status: 'False',
            reason: key.reason,
            message: `${key.message}; the zone stays served as it was (signed with the last key the dns-servers hold, if any)`,
          }),
      observedGeneration: generation,
    },
    now,
  );
}

/** The spec's delegations in force, with the transfer in force (ADR 0216). */
function withTransfer(enforced: EnforcedZone | undefined, input: ZoneStatusInput): EnforcedZone | undefined {
  const transfer = transferInForce(input.zone.spec.transfer, input.transfer, input.zone.status?.enforced);
  return enforced && transfer ? { ...enforced, transfer } : enforced;
}

/** The names this DNSZone governs that some GatewayDNS serves, by namespace. */
function holdersOf(name: string, input: ZoneStatusInput): NonNullable<DNSZoneStatus['holders']> {
  const zones = zonesInForce(input.zones);
  const byNamespace = new Map<string, Set<string>>();
  for (const s of input.served)
    for (const h of s.hostnames)
      if (governingZone(h, zones)?.name === name)
        byNamespace.set(s.namespace, (byNamespace.get(s.namespace) ?? new Set()).add(h));
  return [...byNamespace]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([namespace, names]) => ({ namespace, hostnames: [...names].sort() }));
}

/** Audit: the served names this zone governs that Enforce would withdraw, with the refusal they would get. */
function auditOf(
  name: string,
  zones: GoverningZone[],
  input: ZoneStatusInput,
): NonNullable<DNSZoneStatus['audit']> {
  const out: NonNullable<DNSZoneStatus['audit']> = [];
  for (const s of input.served)
    for (const h of s.hostnames) {
      const v = verdictFor(h, s.namespace, input.namespaceLabels(s.namespace), zones);
      if (v.governed && v.dnsZone === name && !v.allowed)
        out.push({
          hostname: h,
          gatewayDNS: s.gatewayDns,
          message: `not served under Enforce: ${h} (${v.message})`,
        });
    }
  return out.sort((a, b) => a.hostname.localeCompare(b.hostname) || a.gatewayDNS.localeCompare(b.gatewayDNS));
}

/** An older DNSZone, not being deleted, for the same zone. */
function olderDuplicateOf(zone: DNSZone, zones: readonly DNSZone[]): string | undefined {
  const mine = normalizeName(zone.spec.zone ?? '');
  return zones.find(
    (z) =>
      z.metadata.name !== zone.metadata.name &&
      !z.metadata.deletionTimestamp &&
      normalizeName(z.spec.zone ?? '') === mine &&
      olderFirst(z, zone) < 0,
  )?.metadata.name;
}

/** The zones in force strictly inside this one, with their DNSZone's name. */
function childZones(
  zone: DNSZone,
  enforced: EnforcedZone,
  zones: readonly DNSZone[],
): { zone: string; name: string }[] {
  return zonesInForce(zones)
    .filter(
      (z) =>
        z.name !== zone.metadata.name &&
        z.enforced.zone !== enforced.zone &&
        inZone(z.enforced.zone, enforced.zone),
    )
    .map((z) => ({ zone: z.enforced.zone, name: z.name }));
}

/**
 * What every dns-server is told to serve: each zone in force once (of two DNSZones for one zone, the
 * older's). A zone with spec.nameservers.expose gets the NS set and glue `nameserversOf` computes
 * (nameservers.ts); with no exposed server answering, its own names or the dns-servers' --ns.
 */
export function declaredZones(
  zones: readonly DNSZone[],
  nameserversOf: (enforced: EnforcedZone) => ZoneNameservers | undefined = () => undefined,
  dnssecOf: (zone: string) => DeclaredZone['dnssec'] = () => undefined,
): DeclaredZone[] {
  const seen = new Set<string>();
  const out: DeclaredZone[] = [];
  for (const { enforced } of zonesInForce(zones)) {
    if (seen.has(enforced.zone)) continue;
    seen.add(enforced.zone);
    const exposed = enforced.expose ? nameserversOf(enforced) : undefined;
    const nameServers = exposed?.nameServers.length ? exposed.nameServers : (enforced.nameServers ?? []);
    out.push({
      name: enforced.zone,
      ...(enforced.soa ? { soa: enforced.soa } : {}),
      ...(nameServers.length ? { nameServers } : {}),
      ...(exposed?.glue.length ? { glue: exposed.glue } : {}),
      ...(exposed?.cuts.length ? { cuts: exposed.cuts } : {}),
      ...(dnssecOf(enforced.zone) ? { dnssec: dnssecOf(enforced.zone) } : {}),
      ...(enforced.transfer
        ? {
            transfer: {
              secondaries: enforced.transfer.secondaries.map((s) => ({
                address: s.address,
                port: s.port ?? 53,
              })),
              tsigSecret: TSIG_KEYS_SECRET,
            },
          }
        : {}),
    });
  }
  return out;
}

/**
 * What the dns-servers of one management namespace's clusters are told: every zone in force
 * (`declared`), and the namespace parts of exposed zones delegated to the namespace, each a zone
 * of its own behind its cut (ADR 0215). A part another DNSZone declares as a zone stays that one's.
 */
export function declaredZonesFor(
  namespace: string,
  zones: readonly DNSZone[],
  declared: readonly DeclaredZone[],
  nameserversOf: (enforced: EnforcedZone) => ZoneNameservers | undefined,
): DeclaredZone[] {
  const names = new Set(declared.map((z) => z.name));
  const parts = zonesInForce(zones)
    .filter((z) => z.enforced.expose)
    .flatMap((z) => nameserversOf(z.enforced)?.partsServedBy(namespace) ?? [])
    .filter((p) => !names.has(p.name) && (names.add(p.name), true));
  return parts.length ? [...declared, ...parts] : [...declared];
}

/** One zone's view of the declarations: per workload cluster, whether its dns-server is told to serve it. */
export function clustersServing(
  zone: string | undefined,
  declarations: ReadonlyMap<string, { declared: string[] } | { error: string }>,
): NonNullable<DNSZoneStatus['clusters']> {
  return [...declarations]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([cluster, d]) =>
      'error' in d
        ? { cluster, served: false, message: d.error }
        : { cluster, served: zone !== undefined && d.declared.includes(zone) },
    );
}

/** NameserversExposed, while spec.nameservers.expose is in force (left as it was when not computed this pass). */
function exposedCondition(
  conditions: Condition[],
  enforced: EnforcedZone | undefined,
  nameservers: ZoneNameservers | undefined,
  generation: number | undefined,
  now: Date,
): Condition[] {
  const servers = nameservers?.servers ?? [];
  return setConditionWhile(
    conditions,
    enforced?.expose === true,
    ZONE_CONDITIONS.NameserversExposed,
    nameservers && {
      ...(servers.length
        ? {
            status: 'True',
            reason: ZONE_REASONS.Exposed,
            message: `NS ${namedFirst(servers.map((s) => `${s.name} (${s.addresses.join(', ')})`))}${nameservers.cuts.length ? `; zone cuts ${nameservers.cuts.map((c) => c.name).join(', ')}` : ''}${nameservers.uncut.length ? `; no cut for ${nameservers.uncut.join(', ')}` : ''}`,
          }
        : {
            status: 'False',
            reason: ZONE_REASONS.NoExposedServer,
            message: `no cluster serving the zone has an exposed dns-server with an address (Service capi-dns-server-external, type LoadBalancer); NS ${nameservers.nameServers.length ? nameservers.nameServers.join(', ') : "each dns-server's --ns"}`,
          }),
      observedGeneration: generation,
    },
    now,
  );
}
