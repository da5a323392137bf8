// The GatewayDNS objects of the management cluster, as the controller asks the
// manager's cache for them. What it reads and writes in workload clusters is
// declared by its stages (sources/kinds.ts, apply/kinds.ts).
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  DNSZONE_PLURAL,
  GATEWAYDNS_PLURAL,
  GROUP,
  VERSION,
  type DNSZone,
  type GatewayDNS,
} from '../../api/index.js';
import { customResourceType } from '../manager/clusters/resource.js';

export const GATEWAYDNS = customResourceType<GatewayDNS & KubernetesObject>({
  kind: 'GatewayDNS',
  group: GROUP,
  version: VERSION,
  plural: GATEWAYDNS_PLURAL,
});

/** The zones and their delegations, read (not written) by the claims: who may use a custom name. */
export const DNSZONES = customResourceType<DNSZone & KubernetesObject>({
  kind: 'DNSZone',
  group: GROUP,
  version: VERSION,
  plural: DNSZONE_PLURAL,
  clusterScoped: true,
});
