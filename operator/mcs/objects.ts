// The objects one importing cluster gets for one exported Service (pure):
// the ServiceImport, for a ClusterSetIP import the derived Service that holds
// its ClusterSet IP (selector-less, named apart from the local Service so that
// <service>.<ns>.svc.cluster.local keeps meaning the local one), and the MCS
// EndpointSlices, one per exporting cluster, address type and port list, of
// at most 100 endpoints (the EndpointSlice controller's default). A
// ClusterSetIP import's slices also name the derived Service
// (kubernetes.io/service-name), so that kube-proxy carries its traffic to the
// exporting clusters' pods. What is compared for each kind is here too.
import { createHash } from 'node:crypto';
import type { KubernetesObject, V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import {
  CONTROLLER_NAME,
  ENDPOINTSLICE_MANAGED_BY_LABEL,
  MANAGED_BY_LABEL,
  MCS_API_VERSION,
  MCS_CONTROLLER,
  MCS_SERVICE_NAME_LABEL,
  MCS_SOURCE_CLUSTER_LABEL,
  MCS_SOURCE_UNREACHABLE_ANNOTATION,
  SERVICE_NAME_LABEL,
  type ServiceImportSpec,
  type ServiceImportStatus,
} from '../../api/index.js';
import { setCondition, type ConditionInput } from '../model/conditions.js';
import { IMPORT_REASONS, IMPORT_SOURCES_REACHABLE } from './conditions.js';
import { canonical, sameJson } from '../manager/runtime/equal.js';
import type { ImportDesired } from './desired.js';

const MAX_ENDPOINTS_PER_SLICE = 100;

export interface ServiceImportObject extends KubernetesObject {
  spec?: ServiceImportSpec;
  status?: ServiceImportStatus;
}

/**
 * The import's status as the MCS API defines it (status.clusters: the clusters whose exports make
 * it up, by their ClusterProperty id, which is their Cluster API name) and whether each of them
 * answers; undefined when the object has it already, so that nothing unchanged is written (a
 * restart writes nothing).
 */
export function serviceImportStatus(
  desired: ImportDesired,
  current: ServiceImportStatus | undefined,
  generation: number | undefined,
  now: Date,
): ServiceImportStatus | undefined {
  const unreachable = desired.endpoints
    .filter((e) => e.unreachableSince !== undefined)
    .sort((a, b) => (a.cluster < b.cluster ? -1 : 1));
  const reachable: ConditionInput = unreachable.length
    ? {
        type: IMPORT_SOURCES_REACHABLE,
        status: 'False',
        reason: IMPORT_REASONS.SourceUnreachable,
        message: `${unreachable.map((e) => `${e.cluster} unreachable since ${e.unreachableSince}`).join('; ')}: its last known endpoints are kept`,
        observedGeneration: generation,
      }
    : {
        type: IMPORT_SOURCES_REACHABLE,
        status: 'True',
        reason: IMPORT_REASONS.AllReachable,
        message: `every exporting cluster answers (${desired.clusters.length})`,
        observedGeneration: generation,
      };
  const next: ServiceImportStatus = {
    clusters: desired.clusters.map((cluster) => ({ cluster })),
    conditions: setCondition(current?.conditions, reachable, now),
  };
  // setCondition keeps lastTransitionTime while the status stays: an unchanged status compares equal.
  const same =
    sameJson(current?.clusters ?? [], next.clusters) && sameJson(current?.conditions ?? [], next.conditions);
  return same ? undefined : next;
}

/** The derived Service of an import: a hash, so that no name a team may choose is taken and none is too long. */
export function derivedServiceName(name: string): string {
  return `mcs-${hash(name).slice(0, 16)}`;
}

/** Labels on every object of an import: ours (managed-by), and which Service it is for. */
function ownLabels(name: string): Record<string, string> {
  return { [MANAGED_BY_LABEL]: CONTROLLER_NAME, [MCS_SERVICE_NAME_LABEL]: name };
}

/** Ours, for this Service: an object without both labels is someone else's and never changed. */
export function isOurs(object: KubernetesObject, name: string): boolean {
  const labels = object.metadata?.labels ?? {};
  return labels[MANAGED_BY_LABEL] === CONTROLLER_NAME && labels[MCS_SERVICE_NAME_LABEL] === name;
}

export function serviceImportObject(
  namespace: string,
  name: string,
  desired: ImportDesired,
  derived: { ips: string[]; ipFamilies: string[] } | undefined,
): ServiceImportObject {
  const spec: ServiceImportSpec = { ...desired.spec };
  // This cluster's own ClusterSet IPs, and the families it gave them.
  if (derived) {
    spec.ips = derived.ips;
    spec.ipFamilies = derived.ipFamilies;
  }
  return {
    apiVersion: MCS_API_VERSION,
    kind: 'ServiceImport',
    metadata: {
      name,
      namespace,
      // Exported labels first: ours cannot be overridden by an export.
      labels: { ...desired.labels, ...ownLabels(name) },
      annotations: desired.annotations,
    },
    spec,
  };
}

export function serviceImportContent(o: ServiceImportObject): string {
  const s = o.spec;
  return canonical({
    labels: o.metadata?.labels ?? {},
    annotations: withoutSystemAnnotations(o.metadata?.annotations),
    type: s?.type,
    ports: (s?.ports ?? []).map((p) => ({
      name: p.name ?? '',
      protocol: p.protocol ?? 'TCP',
      appProtocol: p.appProtocol ?? '',
      port: p.port,
    })),
    ips: s?.ips ?? [],
    ipFamilies: s?.ipFamilies ?? [],
    sessionAffinity: s?.sessionAffinity ?? 'None',
    sessionAffinityConfig: s?.sessionAffinityConfig ?? null,
    internalTrafficPolicy: s?.internalTrafficPolicy ?? null,
    trafficDistribution: s?.trafficDistribution ?? null,
  });
}

/** kubectl's last-applied and the like are not ours to compare. */
function withoutSystemAnnotations(a: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(a ?? {}).filter(([k]) => !k.startsWith('kubectl.kubernetes.io/')));
}

export function derivedServiceObject(namespace: string, name: string, desired: ImportDesired): V1Service {
  const families = desired.spec.ipFamilies ?? [];
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: derivedServiceName(name), namespace, labels: ownLabels(name) },
    spec: {
      type: 'ClusterIP',
      // A dual-stack export gets both families where this cluster has both, one where it has one.
      ipFamilyPolicy: families.length > 1 ? 'PreferDualStack' : 'SingleStack',
      ...(families.length === 1 ? { ipFamilies: families } : {}),
      ports: desired.spec.ports.map((p) => ({
        ...(p.name ? { name: p.name } : {}),
        protocol: p.protocol ?? 'TCP',
        ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}),
        port: p.port,
      })),
      sessionAffinity: desired.spec.sessionAffinity ?? 'None',
      ...(desired.spec.sessionAffinityConfig
        ? { sessionAffinityConfig: desired.spec.sessionAffinityConfig }
        : {}),
      ...(desired.spec.internalTrafficPolicy
        ? { internalTrafficPolicy: desired.spec.internalTrafficPolicy }
        : {}),
      ...(desired.spec.trafficDistribution ? { trafficDistribution: desired.spec.trafficDistribution } : {}),
    },
  };
}

/** What we set on a derived Service, as found live (with the API server's defaults) or in a manifest. */
export function derivedServiceContent(s: V1Service): string {
  const timeout = s.spec?.sessionAffinityConfig?.clientIP?.timeoutSeconds;
  return canonical({
    labels: s.metadata?.labels ?? {},
    type: s.spec?.type ?? 'ClusterIP',
    headless: s.spec?.clusterIP === 'None',
    ipFamilyPolicy: s.spec?.ipFamilyPolicy ?? 'SingleStack',
    ports: (s.spec?.ports ?? [])
      .map((p) => ({
        name: p.name ?? '',
        port: p.port,
        protocol: p.protocol ?? 'TCP',
        appProtocol: p.appProtocol ?? '',
      }))
      .sort((a, b) => a.name.localeCompare(b.name) || a.port - b.port),
    sessionAffinity: s.spec?.sessionAffinity ?? 'None',
    // The API server fills in 10800 s for ClientIP when no timeout is given.
    timeout: s.spec?.sessionAffinity === 'ClientIP' ? (timeout ?? 10800) : null,
    internalTrafficPolicy: s.spec?.internalTrafficPolicy ?? 'Cluster',
    trafficDistribution: s.spec?.trafficDistribution ?? null,
  });
}

/** The ClusterSet IPs a derived Service was given, in family order; none yet when not allocated. */
export function allocatedIps(s: V1Service | undefined): { ips: string[]; ipFamilies: string[] } | undefined {
  const ips = s?.spec?.clusterIPs ?? (s?.spec?.clusterIP ? [s.spec.clusterIP] : []);
  if (!s || !ips.length || ips[0] === 'None') return undefined;
  return { ips, ipFamilies: s.spec?.ipFamilies ?? ips.map((ip) => (ip.includes(':') ? 'IPv6' : 'IPv4')) };
}

export function sliceObjects(namespace: string, name: string, desired: ImportDesired): V1EndpointSlice[] {
  const out: V1EndpointSlice[] = [];
  const clusterSetIp = desired.spec.type === 'ClusterSetIP';
  for (const { cluster, groups, unreachableSince } of desired.endpoints)
    for (const group of groups)
      for (let i = 0; i < group.endpoints.length; i += MAX_ENDPOINTS_PER_SLICE) {
        const id = `${namespace}/${name}|${cluster}|${group.addressType}|${JSON.stringify(group.ports)}|${i}`;
        out.push({
          apiVersion: 'discovery.k8s.io/v1',
          kind: 'EndpointSlice',
          metadata: {
            name: `mcs-${hash(id).slice(0, 20)}`,
            namespace,
            labels: {
              ...ownLabels(name),
              [MCS_SOURCE_CLUSTER_LABEL]: cluster,
              [ENDPOINTSLICE_MANAGED_BY_LABEL]: MCS_CONTROLLER,
              ...(clusterSetIp ? { [SERVICE_NAME_LABEL]: derivedServiceName(name) } : {}),
            },
            // Marked, not dropped: a cluster that does not answer keeps serving its last endpoints.
            annotations: unreachableSince ? { [MCS_SOURCE_UNREACHABLE_ANNOTATION]: unreachableSince } : {},
          },
          addressType: group.addressType,
          ports: group.ports,
          endpoints: group.endpoints.slice(i, i + MAX_ENDPOINTS_PER_SLICE).map((e) => ({
            addresses: e.addresses,
            conditions: { ready: true, serving: true, terminating: false },
            ...(e.hostname ? { hostname: e.hostname } : {}),
            ...(e.zone ? { zone: e.zone } : {}),
          })),
        });
      }
  return out;
}

export function sliceContent(s: V1EndpointSlice): string {
  return canonical({
    labels: s.metadata?.labels ?? {},
    unreachableSince: s.metadata?.annotations?.[MCS_SOURCE_UNREACHABLE_ANNOTATION] ?? '',
    addressType: s.addressType,
    ports: (s.ports ?? []).map((p) => ({
      name: p.name ?? '',
      port: p.port ?? null,
      protocol: p.protocol ?? 'TCP',
      appProtocol: p.appProtocol ?? '',
    })),
    endpoints: (s.endpoints ?? []).map((e) => ({
      addresses: e.addresses,
      ready: e.conditions?.ready ?? true,
      hostname: e.hostname ?? '',
      zone: e.zone ?? '',
    })),
  });
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
