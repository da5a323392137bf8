// Naming rules shared by the operator (which writes these names) and anyone
// who reads them: generated DNS names, record-set object names and the labels
// that tie a DNSRecordSet back to the GatewayDNS it came from.
import { GROUP } from './dnsrecordset.js';

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const CONTROLLER_NAME = 'capi-dns-controller';
export const GATEWAYDNS_NAMESPACE_LABEL = `${GROUP}/gatewaydns-namespace`;
export const GATEWAYDNS_NAME_LABEL = `${GROUP}/gatewaydns-name`;
/** Cluster API's label on a Cluster's kubeconfig Secret. */
export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';

/** The Cluster API kubeconfig Secret of a cluster (key "value"). */
export function kubeconfigSecretName(cluster: string): string {
  return `${cluster}-kubeconfig`;
}

/**
 * The DNSRecordSet written for one GatewayDNS. A dot cannot occur in a
 * namespace name, so "<namespace>.<name>" is unique across management namespaces.
 */
export function recordSetName(namespace: string, gatewayDns: string): string {
  return `${namespace}.${gatewayDns}`;
}

/** Labels on every DNSRecordSet the operator writes; they name its source GatewayDNS. */
export function recordSetLabels(namespace: string, gatewayDns: string): Record<string, string> {
  return {
    [MANAGED_BY_LABEL]: CONTROLLER_NAME,
    [GATEWAYDNS_NAMESPACE_LABEL]: namespace,
    [GATEWAYDNS_NAME_LABEL]: gatewayDns,
  };
}

/** "<gatewayLabel>.<cluster>.<namespace>.clusters.<suffix>": the base under which one cluster's gateway answers. */
export function clusterGatewayDomain(
  gatewayLabel: string,
  cluster: string,
  namespace: string,
  suffix: string,
): string {
  return `${gatewayLabel}.${cluster}.${namespace}.clusters.${trimDot(suffix)}`;
}

/** "<gatewayLabel>.<namespace>.clusters.<suffix>": answers with every selected cluster's addresses. */
export function namespaceGatewayDomain(gatewayLabel: string, namespace: string, suffix: string): string {
  return `${gatewayLabel}.${namespace}.clusters.${trimDot(suffix)}`;
}

/** "*.<domain>": every host name under a gateway domain resolves to the gateway (RFC 4592 wildcard). */
export function wildcard(domain: string): string {
  return `*.${domain}`;
}

/** "_<port>._<protocol>.<domain>" (RFC 2782), protocol lower-cased as SRV names use it. */
export function srvName(portName: string, protocol: string, domain: string): string {
  return `_${portName}._${protocol.toLowerCase()}.${domain}`;
}

function trimDot(name: string): string {
  return name.replace(/^\.+|\.+$/g, '');
}

/**
 * On a Service in a selected workload cluster: a host name (or several, comma-separated) inside
 * the zone that answers like the GatewayDNS's cluster-independent name.
 */
export const FQDN_ANNOTATION = `${GROUP}/fqdn`;

/** The dns-server Service in each workload cluster's records namespace (config/dns-server). */
export const DNS_SERVER_SERVICE = 'capi-dns-server';
/**
 * On the dns-server Service: "host:port" CoreDNS forwards the zone to instead
 * of the Service's cluster IP, for a CoreDNS that cannot reach cluster IPs
 * (and the local demo, where every cluster shares one service CIDR).
 */
export const FORWARD_ADDRESS_ANNOTATION = `${GROUP}/forward-address`;
/** On a Cluster: "unmanaged" keeps the operator away from that cluster's Corefile. */
export const COREDNS_ANNOTATION = `${GROUP}/coredns`;
export const COREDNS_UNMANAGED = 'unmanaged';
