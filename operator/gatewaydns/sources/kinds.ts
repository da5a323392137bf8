// What the sources read in workload clusters beyond Kubernetes's own kinds:
// Gateway API's Gateways and routes (spec.gatewayRef), and the dns-servers'
// probe reports.
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import { PROBE_REPORT_LABEL } from '../../../api/index.js';
import { configMapsType } from '../../manager/clusters/kinds.js';
import { customResourceType, type ResourceType } from '../../manager/clusters/resource.js';
import {
  GATEWAY_API_GROUP,
  ROUTE_KINDS,
  ROUTE_KIND_NAMES,
  type GatewayObject,
  type RouteKind,
  type RouteObject,
} from './gateway-api.js';

/** Every Gateway of the cluster, shared by every GatewayDNS that names one there. */
export const GATEWAYS = customResourceType<GatewayObject>({
  kind: 'Gateway',
  group: GATEWAY_API_GROUP,
  version: 'v1',
  plural: 'gateways',
});

/** Every route of each kind (HTTPRoute, GRPCRoute, TLSRoute) of the cluster. */
export const ROUTES: Readonly<Record<RouteKind, ResourceType<RouteObject>>> = Object.fromEntries(
  ROUTE_KIND_NAMES.map((kind) => [
    kind,
    customResourceType<RouteObject>({
      kind,
      group: GATEWAY_API_GROUP,
      version: ROUTE_KINDS[kind].version,
      plural: ROUTE_KINDS[kind].plural,
    }),
  ]),
) as Record<RouteKind, ResourceType<RouteObject>>;

/** The dns-servers' probe reports: ConfigMaps of the records namespace, by label. */
export const PROBE_REPORTS: ResourceType<V1ConfigMap & KubernetesObject> = configMapsType('ProbeReport', {
  labelSelector: PROBE_REPORT_LABEL,
});
