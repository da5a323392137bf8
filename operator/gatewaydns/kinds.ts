// What the GatewayDNS controller reads: its own objects in the management
// cluster, and in workload clusters, beyond Kubernetes's own kinds, Gateway API's Gateways and routes (spec.gatewayRef),
// the dns-servers' probe reports, and our DNSRecordSets.
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import {
  CONTROLLER_NAME,
  DNSRECORDSET_PLURAL,
  GATEWAYDNS_PLURAL,
  GROUP,
  MANAGED_BY_LABEL,
  PROBE_REPORT_LABEL,
  VERSION,
  type DNSRecordSet,
  type GatewayDNS,
} from '../../api/index.js';
import { configMapsType } from '../clusters/kinds.js';
import { customResourceType, type ResourceType } from '../clusters/resource.js';
import {
  GATEWAY_API_GROUP,
  ROUTE_KINDS,
  ROUTE_KIND_NAMES,
  type GatewayObject,
  type RouteKind,
  type RouteObject,
} from '../model/gateway-api.js';

/** The GatewayDNS objects of the management cluster (the manager's cache). */
export const GATEWAYDNS = customResourceType<GatewayDNS & KubernetesObject>({
  kind: 'GatewayDNS',
  group: GROUP,
  version: VERSION,
  plural: GATEWAYDNS_PLURAL,
});

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

/** The DNSRecordSets this operator manages. */
export const DNS_RECORD_SETS = customResourceType<DNSRecordSet & KubernetesObject>({
  kind: 'DNSRecordSet',
  group: GROUP,
  version: VERSION,
  plural: DNSRECORDSET_PLURAL,
  labelSelector: `${MANAGED_BY_LABEL}=${CONTROLLER_NAME}`,
});
