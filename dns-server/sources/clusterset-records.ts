// The clusterset zone (KEP-1645's DNS, default clusterset.local) from this
// cluster's own ServiceImports and MCS EndpointSlices (pure), as record sets
// the ordinary build serves, one per ServiceImport. For <svc>.<ns>.svc.<zone>:
// - ClusterSetIP: A/AAAA the import's IPs; SRV one per port at the name
//   ("0 100 <port> <svc>.<ns>.svc.<zone>.") and at _<port>._<proto>.<name>;
// - Headless: A/AAAA every ready endpoint of every exporting cluster;
//   <hostname>.<clusterid>.<name> A/AAAA per ready endpoint (a pod without a
//   hostname named by its dashed address, as Kubernetes DNS does), and SRV
//   naming those (at the name, and per named port).
// The record set's resourceVersion is a digest of its records, so the build
// reparses only a set whose records changed.
import { createHash } from 'node:crypto';
import {
  API_VERSION,
  DNSRECORDSET_KIND,
  MCS_SERVICE_NAME_LABEL,
  MCS_SOURCE_CLUSTER_LABEL,
  type DNSRecord,
  type DNSRecordSet,
} from '../../api/index.js';
import type { SourcedRecordSet } from '../zone/compile.js';

/** Short: an endpoint that goes unready leaves the answers this soon (CoreDNS's kubernetes plugin uses 5 s too). */
export const CLUSTERSET_TTL = 5;

export interface ServiceImportLike {
  metadata?: { name?: string; namespace?: string };
  spec?: {
    type?: string;
    ips?: string[];
    ports?: { name?: string; protocol?: string; port: number }[];
  };
}

export interface McsSliceLike {
  metadata?: { namespace?: string; labels?: Record<string, string> };
  addressType?: string;
  endpoints?: { addresses: string[]; hostname?: string; conditions?: { ready?: boolean } }[];
}

export function clustersetRecordSets(
  zone: string,
  imports: readonly ServiceImportLike[],
  slices: readonly McsSliceLike[],
): SourcedRecordSet[] {
  const slicesOf = new Map<string, McsSliceLike[]>();
  for (const s of slices) {
    const service = s.metadata?.labels?.[MCS_SERVICE_NAME_LABEL];
    if (!service) continue;
    const key = `${s.metadata?.namespace ?? ''}/${service}`;
    slicesOf.set(key, [...(slicesOf.get(key) ?? []), s]);
  }
  const out: SourcedRecordSet[] = [];
  for (const si of imports) {
    const namespace = si.metadata?.namespace ?? '';
    const name = si.metadata?.name ?? '';
    const base = `${name}.${namespace}.svc.${zone}`;
    const records =
      si.spec?.type === 'Headless'
        ? headless(base, si, slicesOf.get(`${namespace}/${name}`) ?? [])
        : clusterSetIp(base, si);
    if (!records.length) continue;
    const id = `clusterset:${namespace}/${name}`;
    out.push({
      source: id,
      set: {
        apiVersion: API_VERSION,
        kind: DNSRECORDSET_KIND,
        metadata: { name: `${namespace}.${name}`, uid: id, resourceVersion: digest(records) },
        spec: { records },
      } satisfies DNSRecordSet,
    });
  }
  return out.sort((a, b) => (a.source < b.source ? -1 : 1));
}

function clusterSetIp(base: string, si: ServiceImportLike): DNSRecord[] {
  const ips = si.spec?.ips ?? [];
  const records = addressRecords(base, ips);
  if (!records.length) return [];
  return [...records, ...srv(base, si, [`${base}.`])];
}

function headless(base: string, si: ServiceImportLike, slices: McsSliceLike[]): DNSRecord[] {
  const all: string[] = [];
  const targets: string[] = [];
  const perHost = new Map<string, string[]>();
  for (const s of slices) {
    const cluster = s.metadata?.labels?.[MCS_SOURCE_CLUSTER_LABEL];
    for (const e of s.endpoints ?? []) {
      if (e.conditions?.ready === false) continue;
      all.push(...e.addresses);
      if (!cluster) continue;
      // A pod without a hostname is named by its address, dashed, as Kubernetes DNS names it.
      const named: [string, string[]][] = e.hostname
        ? [[e.hostname, e.addresses]]
        : e.addresses.map((a) => [a.replace(/[.:]/g, '-'), [a]]);
      for (const [label, addresses] of named) {
        const host = `${label}.${cluster}.${base}`;
        if (!perHost.has(host)) targets.push(`${host}.`);
        perHost.set(host, [...(perHost.get(host) ?? []), ...addresses]);
      }
    }
  }
  if (!all.length) return [];
  return [
    ...addressRecords(base, all),
    ...[...perHost.entries()].flatMap(([host, addresses]) => addressRecords(host, addresses)),
    ...srv(base, si, targets),
  ];
}

function addressRecords(owner: string, addresses: readonly string[]): DNSRecord[] {
  const v4 = [...new Set(addresses.filter((a) => !a.includes(':')))].sort();
  const v6 = [...new Set(addresses.filter((a) => a.includes(':')))].sort();
  return [
    ...(v4.length ? [{ name: owner, type: 'A' as const, ttl: CLUSTERSET_TTL, values: v4 }] : []),
    ...(v6.length ? [{ name: owner, type: 'AAAA' as const, ttl: CLUSTERSET_TTL, values: v6 }] : []),
  ];
}

/** SRV at the name (every port) and at _<port>._<proto>.<name> (each named port), to each target. */
function srv(base: string, si: ServiceImportLike, targets: readonly string[]): DNSRecord[] {
  if (!targets.length) return [];
  const ports = si.spec?.ports ?? [];
  const values = (port: number) => targets.map((t) => `0 100 ${port} ${t}`);
  const atName = [...new Set(ports.flatMap((p) => values(p.port)))].sort();
  const out: DNSRecord[] = atName.length
    ? [{ name: base, type: 'SRV', ttl: CLUSTERSET_TTL, values: atName }]
    : [];
  for (const p of ports) {
    if (!p.name) continue;
    out.push({
      name: `_${p.name}._${(p.protocol ?? 'TCP').toLowerCase()}.${base}`,
      type: 'SRV',
      ttl: CLUSTERSET_TTL,
      values: values(p.port),
    });
  }
  return out;
}

function digest(records: DNSRecord[]): string {
  return createHash('sha256').update(JSON.stringify(records)).digest('hex').slice(0, 16);
}
