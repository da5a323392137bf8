// What the DNSZone controller reads of the management cluster: the DNSZones,
// and the GatewayDNS whose status.hostnames say which namespace holds which
// name. Declared here as the GatewayDNS controller declares its own: the
// manager's cache shares one informer per watch. In each workload cluster: the
// ConfigMap that tells its dns-server which zones to serve.
import type { KubernetesObject, V1ConfigMap, V1Secret, V1Service } from '@kubernetes/client-node';
import {
  DNSSEC_KEYS_SECRET,
  DNSZONE_PLURAL,
  EXPOSED_DNS_SERVICE,
  GATEWAYDNS_PLURAL,
  GROUP,
  SERVED_SERIALS_LABEL,
  TSIG_KEYS_SECRET,
  VERSION,
  ZONES_CONFIGMAP,
  type DNSZone,
  type GatewayDNS,
} from '../../api/index.js';
import { configMapsType, secretsType, servicesType } from '../manager/clusters/kinds.js';
import { customResourceType, type ResourceType } from '../manager/clusters/resource.js';

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

/** In each workload cluster's records namespace: the zones its dns-server is told to serve. */
export const ZONE_DECLARATIONS: ResourceType<V1ConfigMap & KubernetesObject> = configMapsType(
  'ZoneDeclaration',
  {
    fieldSelector: `metadata.name=${ZONES_CONFIGMAP}`,
  },
);

/**
 * In each workload cluster's records namespace: the dns-server's exposed Service, whose
 * load-balancer addresses are the glue of the zones with spec.nameservers.expose (ADR 0215).
 */
export const EXPOSED_DNS_SERVERS: ResourceType<V1Service & KubernetesObject> = servicesType(
  'ExposedDnsServer',
  undefined,
  `metadata.name=${EXPOSED_DNS_SERVICE}`,
);

/**
 * In each workload cluster's records namespace: the one Secret holding the signing keys of the
 * signed zones its dns-server is told (ADR 0106). Watched only while some zone is signed.
 */
export const DNSSEC_KEY_SECRETS: ResourceType<V1Secret & KubernetesObject> = secretsType(
  'DnssecKeys',
  `metadata.name=${DNSSEC_KEYS_SECRET}`,
);

/** In each workload cluster's records namespace: the TSIG keys of the zones declared with transfer (ADR 0216). */
export const TSIG_KEY_SECRETS: ResourceType<V1Secret & KubernetesObject> = secretsType(
  'TsigKeySecret',
  `metadata.name=${TSIG_KEYS_SECRET}`,
);

/**
 * In each workload cluster's records namespace: the serials its dns-server replicas serve
 * (api/served-serials.ts), shown in status.nameservers[].serial. Watched only while some zone
 * exposes its dns-servers.
 */
export const SERVED_SERIALS: ResourceType<V1ConfigMap & KubernetesObject> = configMapsType('ServedSerials', {
  labelSelector: SERVED_SERIALS_LABEL,
});
