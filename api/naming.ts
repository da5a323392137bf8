// Naming rules shared by the operator (which writes these names) and anyone
// who reads them: generated DNS names, record-set object names and the labels
// that tie a DNSRecordSet back to the GatewayDNS it came from.
import { createHash } from 'node:crypto';
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

/** On a DNSRecordSet: the selected cluster whose addresses it holds. */
export const SOURCE_CLUSTER_LABEL = `${GROUP}/source-cluster`;

/**
 * The DNSRecordSet holding what one source cluster contributes to one
 * GatewayDNS: "<namespace>.<gatewaydns>.<cluster>". One set per source
 * cluster, not one per GatewayDNS, so that a change in one cluster rewrites
 * only that cluster's share (the dns-server merges equal names and types).
 * A namespace has no dots, so the three parts are unambiguous while the other
 * two have none either; otherwise (or when too long for an object name) a
 * hash of the three stands in, with the parts in the labels.
 */
export function recordSetName(namespace: string, gatewayDns: string, sourceCluster: string): string {
  const readable = `${namespace}.${gatewayDns}.${sourceCluster}`;
  if (!gatewayDns.includes('.') && !sourceCluster.includes('.') && readable.length <= 253) return readable;
  const digest = createHash('sha256').update(`${namespace}/${gatewayDns}/${sourceCluster}`).digest('hex');
  return `${namespace}.h${digest.slice(0, 20)}`;
}

/** Labels on every DNSRecordSet the operator writes; they name its source GatewayDNS and cluster. */
export function recordSetLabels(
  namespace: string,
  gatewayDns: string,
  sourceCluster: string,
): Record<string, string> {
  return { ...gatewayDnsLabels(namespace, gatewayDns), [SOURCE_CLUSTER_LABEL]: sourceCluster };
}

/** The labels every record set of one GatewayDNS carries, whatever its source cluster: how its sets are found. */
export function gatewayDnsLabels(namespace: string, gatewayDns: string): Record<string, string> {
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

/**
 * On a management cluster's Namespace: the workload-cluster namespaces that the GatewayDNS
 * objects of that namespace may read a Service from (spec.service) and write a mirror into
 * (spec.mirror.namespace). A comma-separated list of names, "prefix-*" patterns, or "*". Set by
 * whoever may edit Namespaces, which a tenant with rights on GatewayDNS alone cannot.
 */
export const WORKLOAD_NAMESPACES_ANNOTATION = `${GROUP}/workload-namespaces`;
