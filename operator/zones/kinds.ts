// What the DNSZone controller reads of the management cluster: the DNSZones,
// and the GatewayDNS whose status.hostnames say which namespace holds which
// name. Declared here as the GatewayDNS controller declares its own: the
// manager's cache shares one informer per watch.
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  DNSZONE_PLURAL,
  GATEWAYDNS_PLURAL,
  GROUP,
  VERSION,
  type DNSZone,
  type GatewayDNS,
} from '../../api/index.js';
import { customResourceType } from '../clusters/resource.js';

export const DNSZONES = customResourceType<DNSZone & KubernetesObject>({
  kind: 'DNSZone',
  group: GROUP,
  version: VERSION,
  plural: DNSZONE_PLURAL,
  clusterScoped: true,
});

export const GATEWAYDNS = customResourceType<GatewayDNS & KubernetesObject>({
  kind: 'GatewayDNS',
  group: GROUP,
  version: VERSION,
  plural: GATEWAYDNS_PLURAL,
});
