// What one exporting cluster says about one exported Service (pure): its
// ServiceExport, the Service of that name, and the ready endpoints of the
// Service's own EndpointSlices, cut down to what the ClusterSet needs. Slices
// written by a multi-cluster controller (ours or a mirror) are never a source:
// an import must not feed on itself.
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import {
  ENDPOINTSLICE_MANAGED_BY_LABEL,
  MCS_SERVICE_NAME_LABEL,
  MCS_EXPORT_TO_ANNOTATION,
  SERVICE_NAME_LABEL,
  type LabelSelector,
  type McsServicePort,
  type ServiceExportSpec,
  type SessionAffinityConfig,
} from '../../api/index.js';

import { parseSelector, SelectorSyntaxError } from '../model/selector.js';

/** The Kubernetes EndpointSlice controller: the one source of a Service's endpoints we read. */
const ENDPOINTSLICE_CONTROLLER = 'endpointslice-controller.k8s.io';

export type AddressType = 'IPv4' | 'IPv6';

export interface ExportedServiceShape {
  /** ExternalName cannot be exported (KEP-1645: Valid=False, InvalidServiceType). */
  externalName: boolean;
  headless: boolean;
  ports: McsServicePort[];
  sessionAffinity: string;
  sessionAffinityConfig?: SessionAffinityConfig;
  ipFamilies: string[];
  internalTrafficPolicy?: string;
  trafficDistribution?: string;
}

/** A ready endpoint, as another cluster may use it: no node or pod reference (they name objects of the source cluster). */
export interface ExportedEndpoint {
  addresses: string[];
  hostname?: string;
  zone?: string;
}

/** The endpoints of one address type that share one port list (an EndpointSlice's unit). */
export interface EndpointGroup {
  addressType: AddressType;
  ports: { name?: string; port?: number; protocol?: string; appProtocol?: string }[];
  endpoints: ExportedEndpoint[];
}

export interface ExportObservation {
  /** The exporting cluster's id (its Cluster API name). */
  cluster: string;
  exportUid: string;
  /** RFC 3339, seconds: the conflict rule's "oldest export". */
  exportCreated: string;
  exportGeneration?: number;
  spec: ServiceExportSpec;
  /** undefined: the cluster has no Service of that name. */
  service?: ExportedServiceShape;
  endpoints: EndpointGroup[];
  /** Set when this is the last seen of a cluster that does not answer now: since when. */
  unreachableSince?: string;
  /** The export-to annotation: the members it reaches; absent, every member. */
  exportTo?: LabelSelector;
  /** Why the export-to annotation is no selector (the export is then not valid). */
  exportToError?: string;
}

interface ServiceExportLike {
  metadata?: {
    uid?: string;
    creationTimestamp?: Date | string;
    generation?: number;
    annotations?: Record<string, string>;
  };
  spec?: ServiceExportSpec;
}

export function observeExport(
  cluster: string,
  serviceExport: ServiceExportLike,
  service: V1Service | undefined,
  slices: readonly V1EndpointSlice[],
): ExportObservation {
  const created = serviceExport.metadata?.creationTimestamp;
  const exportTo = serviceExport.metadata?.annotations?.[MCS_EXPORT_TO_ANNOTATION];
  let selector: { exportTo?: LabelSelector; exportToError?: string } = {};
  if (exportTo !== undefined)
    try {
      selector = { exportTo: parseSelector(exportTo) };
    } catch (err) {
      if (!(err instanceof SelectorSyntaxError)) throw err;
      selector = { exportToError: `annotation ${MCS_EXPORT_TO_ANNOTATION}: ${err.message}` };
    }
  return {
    ...selector,
    cluster,
    exportUid: serviceExport.metadata?.uid ?? '',
    exportCreated: created instanceof Date ? created.toISOString() : (created ?? ''),
    exportGeneration: serviceExport.metadata?.generation,
    spec: {
      exportedLabels: serviceExport.spec?.exportedLabels,
      exportedAnnotations: serviceExport.spec?.exportedAnnotations,
    },
    service: service ? shapeOf(service) : undefined,
    endpoints: service && service.spec?.type !== 'ExternalName' ? readyEndpoints(service, slices) : [],
  };
}

function shapeOf(service: V1Service): ExportedServiceShape {
  const spec = service.spec ?? {};
  return {
    externalName: spec.type === 'ExternalName',
    headless: spec.clusterIP === 'None',
    ports: (spec.ports ?? []).map((p) => ({
      ...(p.name ? { name: p.name } : {}),
      protocol: p.protocol ?? 'TCP',
      ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}),
      port: p.port,
    })),
    sessionAffinity: spec.sessionAffinity ?? 'None',
    ...(spec.sessionAffinity === 'ClientIP' && spec.sessionAffinityConfig
      ? { sessionAffinityConfig: spec.sessionAffinityConfig as SessionAffinityConfig }
      : {}),
    ipFamilies: spec.ipFamilies ?? [],
    ...(spec.internalTrafficPolicy ? { internalTrafficPolicy: spec.internalTrafficPolicy } : {}),
    ...(spec.trafficDistribution ? { trafficDistribution: spec.trafficDistribution } : {}),
  };
}

function readyEndpoints(service: V1Service, slices: readonly V1EndpointSlice[]): EndpointGroup[] {
  const name = service.metadata?.name;
  const groups = new Map<string, EndpointGroup>();
  for (const slice of slices) {
    const labels = slice.metadata?.labels ?? {};
    if (labels[SERVICE_NAME_LABEL] !== name || labels[MCS_SERVICE_NAME_LABEL] !== undefined) continue;
    const managedBy = labels[ENDPOINTSLICE_MANAGED_BY_LABEL];
    if (managedBy !== undefined && managedBy !== ENDPOINTSLICE_CONTROLLER) continue;
    if (slice.addressType !== 'IPv4' && slice.addressType !== 'IPv6') continue;
    const ports = (slice.ports ?? [])
      .map((p) => ({
        ...(p.name ? { name: p.name } : {}),
        ...(p.port !== undefined ? { port: p.port } : {}),
        protocol: p.protocol ?? 'TCP',
        ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}),
      }))
      .sort((a, b) => (a.name ?? '').localeCompare(b.name ?? '') || (a.port ?? 0) - (b.port ?? 0));
    const key = `${slice.addressType}|${JSON.stringify(ports)}`;
    let group = groups.get(key);
    if (!group) {
      group = { addressType: slice.addressType, ports, endpoints: [] };
      groups.set(key, group);
    }
    for (const e of slice.endpoints ?? []) {
      // ready unset means ready (EndpointSlice API); a terminating endpoint is not served.
      if (e.conditions?.ready === false || e.conditions?.terminating === true) continue;
      group.endpoints.push({
        addresses: [...e.addresses],
        ...(e.hostname ? { hostname: e.hostname } : {}),
        ...(e.zone ? { zone: e.zone } : {}),
      });
    }
  }
  const out = [...groups.values()].filter((g) => g.endpoints.length > 0);
  for (const g of out) g.endpoints.sort((a, b) => (a.addresses[0] ?? '').localeCompare(b.addresses[0] ?? ''));
  return out.sort((a, b) =>
    `${a.addressType}|${JSON.stringify(a.ports)}`.localeCompare(
      `${b.addressType}|${JSON.stringify(b.ports)}`,
    ),
  );
}
