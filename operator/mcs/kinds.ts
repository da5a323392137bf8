// What the Multi-Cluster Services controller reads and keeps in member
// clusters, cluster-wide: every ServiceExport, and our ServiceImports,
// derived Services and MCS EndpointSlices (by our labels), and KEP-2149's
// ClusterProperties.
import type { KubernetesObject, V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import {
  ABOUT_GROUP,
  ABOUT_VERSION,
  CLUSTERPROPERTY_PLURAL,
  CONTROLLER_NAME,
  ENDPOINTSLICE_MANAGED_BY_LABEL,
  MANAGED_BY_LABEL,
  MCS_CONTROLLER,
  MCS_GROUP,
  MCS_SERVICE_NAME_LABEL,
  MCS_VERSION,
  SERVICEEXPORT_PLURAL,
  SERVICEIMPORT_PLURAL,
} from '../../api/index.js';
import { endpointSlicesType, servicesType } from '../manager/clusters/kinds.js';
import { customResourceType, type ResourceType } from '../manager/clusters/resource.js';

export const SERVICE_EXPORTS = customResourceType({
  kind: 'ServiceExport',
  group: MCS_GROUP,
  version: MCS_VERSION,
  plural: SERVICEEXPORT_PLURAL,
});

export const SERVICE_IMPORTS = customResourceType({
  kind: 'ServiceImport',
  group: MCS_GROUP,
  version: MCS_VERSION,
  plural: SERVICEIMPORT_PLURAL,
  labelSelector: `${MANAGED_BY_LABEL}=${CONTROLLER_NAME}`,
});

/** The Services holding our ClusterSet IPs. */
export const DERIVED_SERVICES: ResourceType<V1Service & KubernetesObject> = servicesType(
  'DerivedService',
  `${MANAGED_BY_LABEL}=${CONTROLLER_NAME},${MCS_SERVICE_NAME_LABEL}`,
);

export const MCS_ENDPOINT_SLICES: ResourceType<V1EndpointSlice & KubernetesObject> = endpointSlicesType(
  'McsEndpointSlice',
  `${ENDPOINTSLICE_MANAGED_BY_LABEL}=${MCS_CONTROLLER}`,
);

export const CLUSTER_PROPERTIES = customResourceType({
  kind: 'ClusterProperty',
  group: ABOUT_GROUP,
  version: ABOUT_VERSION,
  plural: CLUSTERPROPERTY_PLURAL,
});

/** The kinds whose changes concern an import (ours, in every member), not an export. */
export const IMPORT_KINDS: readonly string[] = [SERVICE_IMPORTS, DERIVED_SERVICES, MCS_ENDPOINT_SLICES].map(
  (t) => t.kind,
);
