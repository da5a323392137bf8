// One exported Service across a ClusterSet (pure): the exports of every
// member cluster → the ServiceImport every member gets, the endpoints it
// carries, and the conditions each ServiceExport reports. KEP-1645's rules:
// an ExternalName Service, or no Service at all, makes an export invalid;
// among the valid ones the oldest export (creation time, then cluster name,
// so that equal seconds still give one answer) wins every property they
// disagree on, ports are the union by name (the oldest wins a name), and
// every export of a Service in conflict says so (Conflict=True, one reason).
import type { McsServicePort, ServiceImportSpec, SessionAffinityConfig } from '../../api/index.js';
import type { EndpointGroup, ExportObservation } from './observe.js';
import { EXPORT_CONDITIONS, type ExportReason } from './conditions.js';
import { matchesSelector } from '../model/selector.js';

export interface ExportCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: ExportReason;
  message: string;
}

export interface ImportDesired {
  /** spec.ips is per importing cluster (its own ClusterSet IP): left out here. */
  spec: Omit<ServiceImportSpec, 'ips'>;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** The clusters whose exports make up the import, sorted: status.clusters. */
  clusters: string[];
  /** Per exporting cluster, its ready endpoints (the last seen, and since when, if it does not answer). */
  endpoints: { cluster: string; groups: EndpointGroup[]; unreachableSince?: string }[];
}

export interface ServicePlan {
  /** undefined: no valid export, so no ServiceImport anywhere. */
  import?: ImportDesired;
  /** Per exporting cluster, the Valid and Conflict conditions (Ready is the writer's to say). */
  conditions: Map<string, ExportCondition[]>;
}

/** In the order a Conflict condition names them: the first one found is its reason. */
const CHECKS: {
  reason: ExportReason;
  what: string;
  of: (o: ValidExport) => unknown;
}[] = [
  { reason: 'TypeConflict', what: 'headlessness', of: (o) => o.service.headless },
  { reason: 'PortConflict', what: 'ports', of: (o) => sortPorts(o.service.ports) },
  { reason: 'SessionAffinityConflict', what: 'sessionAffinity', of: (o) => o.service.sessionAffinity },
  {
    reason: 'SessionAffinityConfigConflict',
    what: 'sessionAffinityConfig',
    of: (o) => o.service.sessionAffinityConfig ?? null,
  },
  {
    reason: 'InternalTrafficPolicyConflict',
    what: 'internalTrafficPolicy',
    of: (o) => o.service.internalTrafficPolicy ?? null,
  },
  {
    reason: 'TrafficDistributionConflict',
    what: 'trafficDistribution',
    of: (o) => o.service.trafficDistribution ?? null,
  },
  { reason: 'IPFamilyConflict', what: 'ipFamilies', of: (o) => o.service.ipFamilies },
  { reason: 'LabelsConflict', what: 'exportedLabels', of: (o) => sortedEntries(o.spec.exportedLabels) },
  {
    reason: 'AnnotationsConflict',
    what: 'exportedAnnotations',
    of: (o) => sortedEntries(o.spec.exportedAnnotations),
  },
];

type ValidExport = ExportObservation & { service: NonNullable<ExportObservation['service']> };

export function planService(
  namespace: string,
  name: string,
  exports: readonly ExportObservation[],
): ServicePlan {
  const conditions = new Map<string, ExportCondition[]>();
  const valid: ValidExport[] = [];
  for (const o of exports) {
    if (!o.service) {
      conditions.set(o.cluster, [
        invalid('NoService', `no Service ${namespace}/${name} in cluster ${o.cluster}`),
      ]);
    } else if (o.exportToError) {
      conditions.set(o.cluster, [invalid('InvalidExportTo', `${o.exportToError}; not exported`)]);
    } else if (o.service.externalName) {
      conditions.set(o.cluster, [
        invalid(
          'InvalidServiceType',
          `Service ${namespace}/${name} is of type ExternalName, which cannot be exported`,
        ),
      ]);
    } else valid.push(o as ValidExport);
  }
  valid.sort((a, b) => a.exportCreated.localeCompare(b.exportCreated) || a.cluster.localeCompare(b.cluster));
  const oldest = valid[0];
  if (!oldest) return { conditions };

  const found = CHECKS.filter((check) => {
    const winner = JSON.stringify(check.of(oldest));
    return valid.some((o) => JSON.stringify(check.of(o)) !== winner);
  });
  const conflict: ExportCondition = found[0]
    ? {
        type: EXPORT_CONDITIONS.Conflict,
        status: 'True',
        reason: found[0].reason,
        message: `the exports of ${namespace}/${name} differ in ${found.map((c) => c.what).join(', ')}; the oldest export (cluster ${oldest.cluster}) wins${found.some((c) => c.reason === 'PortConflict') ? ', ports are their union by name' : ''}`,
      }
    : {
        type: EXPORT_CONDITIONS.Conflict,
        status: 'False',
        reason: 'NoConflicts',
        message: `the exports of ${namespace}/${name} agree`,
      };
  for (const o of valid)
    conditions.set(o.cluster, [
      {
        type: EXPORT_CONDITIONS.Valid,
        status: 'True',
        reason: 'Valid',
        message: `Service ${namespace}/${name} can be exported`,
      },
      conflict,
    ]);

  const s = oldest.service;
  const sessionAffinityConfig: SessionAffinityConfig | undefined = s.sessionAffinityConfig;
  const ports = unionOfPorts(valid);
  return {
    conditions,
    import: {
      spec: {
        type: s.headless ? 'Headless' : 'ClusterSetIP',
        ports,
        sessionAffinity: s.sessionAffinity,
        ...(sessionAffinityConfig ? { sessionAffinityConfig } : {}),
        ...(s.ipFamilies.length ? { ipFamilies: s.ipFamilies } : {}),
        ...(s.internalTrafficPolicy ? { internalTrafficPolicy: s.internalTrafficPolicy } : {}),
        ...(s.trafficDistribution ? { trafficDistribution: s.trafficDistribution } : {}),
      },
      labels: { ...(oldest.spec.exportedLabels ?? {}) },
      annotations: { ...(oldest.spec.exportedAnnotations ?? {}) },
      clusters: valid.map((o) => o.cluster).sort(),
      endpoints: valid
        .map((o) => ({
          cluster: o.cluster,
          groups: servingImportPorts(o, ports),
          ...(o.unreachableSince ? { unreachableSince: o.unreachableSince } : {}),
        }))
        .sort((a, b) => a.cluster.localeCompare(b.cluster)),
    },
  };
}

/** What every member gets: its own import (or none), and the conditions of every export. */
export interface MembersPlan {
  importOf: ReadonlyMap<string, ImportDesired | undefined>;
  conditions: Map<string, ExportCondition[]>;
  /**
   * Per exporting cluster, the members its export reaches, sorted (ServiceExport status.clusters,
   * KEP PR kubernetes/enhancements#6329): those its export-to annotation selects, every member
   * without one; none while the export is not valid (it is not exported).
   */
  reaches: Map<string, string[]>;
}

/**
 * The plan per member, with exports that name their consumers (the export-to annotation): each
 * member's import is planned from the exports that reach it alone, by KEP-1645's rules among them
 * (oldest wins, ports the union). Members that the same exports reach share one plan: without the
 * annotation, that is every member and one plan, as before. An export's Conflict is True when it
 * conflicts with another where both reach a member.
 */
export function planForMembers(
  namespace: string,
  name: string,
  exports: readonly ExportObservation[],
  members: readonly { name: string; labels?: Record<string, string> }[],
): MembersPlan {
  const whole = planService(namespace, name, exports);
  const groups = new Map<string, ServicePlan>();
  // Without export-to annotations every member is reached by every export: the whole plan, reused.
  const everyExport = exports.map((o) => o.cluster).join(',');
  const importOf = new Map<string, ImportDesired | undefined>();
  for (const m of members) {
    const reaching = exports.filter((o) => !o.exportTo || matchesSelector(o.exportTo, m.labels));
    const key = reaching.map((o) => o.cluster).join(',');
    let plan = groups.get(key);
    if (!plan) {
      plan = key === everyExport ? whole : planService(namespace, name, reaching);
      groups.set(key, plan);
    }
    importOf.set(m.name, plan.import);
  }
  const conditions = new Map<string, ExportCondition[]>();
  for (const [cluster, planned] of whole.conditions) {
    const conflict = [...groups.values()]
      .map((g) => g.conditions.get(cluster)?.find((c) => c.type === EXPORT_CONDITIONS.Conflict))
      .filter((c): c is ExportCondition => c !== undefined);
    const found = conflict.find((c) => c.status === 'True') ?? conflict[0];
    conditions.set(
      cluster,
      planned.map((c) => (c.type === EXPORT_CONDITIONS.Conflict && found ? found : c)),
    );
  }
  const reaches = new Map<string, string[]>();
  for (const o of exports) {
    const valid = whole.conditions
      .get(o.cluster)
      ?.some((c) => c.type === EXPORT_CONDITIONS.Valid && c.status === 'True');
    reaches.set(
      o.cluster,
      valid
        ? members
            .filter((m) => !o.exportTo || matchesSelector(o.exportTo, m.labels))
            .map((m) => m.name)
            .sort()
        : [],
    );
  }
  return { importOf, conditions, reaches };
}

/**
 * An export's endpoints, for the import's ports its own Service defines the same way only: a
 * cluster whose port "tcp" is 4242 while the import's (an older export's) is 42 must not receive
 * the import's port-42 traffic (the KEP's conflict rule, and the suite's StrictPortConflict specs).
 * Endpoints left with no port serve nothing and are left out.
 */
function servingImportPorts(o: ValidExport, importPorts: readonly McsServicePort[]): EndpointGroup[] {
  const same = (a: McsServicePort, b: McsServicePort) =>
    a.port === b.port && (a.protocol ?? 'TCP') === (b.protocol ?? 'TCP');
  const agreeing = new Set(
    importPorts
      .filter((p) => o.service.ports.some((q) => (q.name ?? '') === (p.name ?? '') && same(p, q)))
      .map((p) => p.name ?? ''),
  );
  return o.endpoints.flatMap((group) => {
    if (!group.ports.length) return [group];
    const ports = group.ports.filter((p) => agreeing.has(p.name ?? ''));
    return ports.length ? [{ ...group, ports }] : [];
  });
}

/** The union by port name, oldest first: a name already taken keeps the older export's definition. */
function unionOfPorts(oldestFirst: readonly ValidExport[]): McsServicePort[] {
  const byName = new Map<string, McsServicePort>();
  for (const o of oldestFirst)
    for (const p of o.service.ports) if (!byName.has(p.name ?? '')) byName.set(p.name ?? '', p);
  return sortPorts([...byName.values()]);
}

function sortPorts(ports: readonly McsServicePort[]): McsServicePort[] {
  return [...ports].sort(
    (a, b) =>
      (a.name ?? '').localeCompare(b.name ?? '') ||
      a.port - b.port ||
      (a.protocol ?? '').localeCompare(b.protocol ?? ''),
  );
}

function sortedEntries(map: Record<string, string> | undefined): [string, string][] {
  return Object.entries(map ?? {}).sort(([a], [b]) => a.localeCompare(b));
}

function invalid(reason: ExportReason, message: string): ExportCondition {
  return { type: EXPORT_CONDITIONS.Valid, status: 'False', reason, message };
}
