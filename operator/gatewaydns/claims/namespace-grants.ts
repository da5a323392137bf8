// Pure: which workload-cluster namespaces a GatewayDNS may reach. A tenant who
// may write GatewayDNS objects in one management namespace must not reach
// every namespace of their clusters through the operator's credentials: read
// a Service in kube-system, or write a mirror Service there. The grant is an
// annotation on the management cluster's Namespace (docs/adr/0205), which
// only someone who may edit Namespaces sets.
import { WORKLOAD_NAMESPACES_ANNOTATION } from '../../../api/index.js';

/**
 * Namespaces no GatewayDNS reaches unless the management namespace's annotation names them
 * (a "*" names them too): the cluster's own components, and the dns-server's, whose record
 * sets a mirror must not be able to shadow.
 */
export function deniedByDefault(recordsNamespace: string): string[] {
  return ['kube-system', 'kube-public', 'kube-node-lease', recordsNamespace];
}

export type Grant = { allowed: true } | { allowed: false; message: string };

/** The namespaces a GatewayDNS names, with the field that names each. */
export function namespacesNamed(spec: {
  serviceNamespace: string;
  gateway?: { namespace: string };
  mirror?: { namespace: string };
}): { field: string; namespace: string }[] {
  return [
    spec.gateway
      ? { field: 'spec.gatewayRef.namespace', namespace: spec.gateway.namespace }
      : { field: 'spec.service', namespace: spec.serviceNamespace },
    ...(spec.mirror ? [{ field: 'spec.mirror.namespace', namespace: spec.mirror.namespace }] : []),
  ];
}

function matches(pattern: string, namespace: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('*')) return namespace.startsWith(pattern.slice(0, -1));
  return pattern === namespace;
}

/** The annotation's entries, trimmed, empty ones dropped. */
export function parseGrant(annotation: string | undefined): string[] | undefined {
  if (annotation === undefined) return undefined;
  return annotation
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
}

/**
 * Whether the GatewayDNS objects of management namespace `managementNamespace`, whose Namespace
 * carries `annotation`, may name these workload namespaces. Without the annotation every
 * namespace but those denied by default is allowed, so that existing manifests keep working;
 * with it, exactly the namespaces it names (an empty value: none).
 */
export function checkGrant(
  managementNamespace: string,
  annotation: string | undefined,
  named: { field: string; namespace: string }[],
  recordsNamespace: string,
): Grant {
  const grant = parseGrant(annotation);
  const refused = named.filter(({ namespace }) =>
    grant === undefined
      ? deniedByDefault(recordsNamespace).includes(namespace)
      : !grant.some((p) => matches(p, namespace)),
  );
  if (!refused.length) return { allowed: true };
  const how =
    grant === undefined
      ? `namespaces ${deniedByDefault(recordsNamespace).join(', ')} are reached only when the annotation ${WORKLOAD_NAMESPACES_ANNOTATION} on Namespace ${managementNamespace} of the management cluster names them`
      : `the annotation ${WORKLOAD_NAMESPACES_ANNOTATION} on Namespace ${managementNamespace} of the management cluster allows ${grant.length ? grant.join(', ') : 'no namespace'}`;
  return {
    allowed: false,
    message: `${refused.map((r) => `${r.field} names workload namespace ${r.namespace}`).join('; ')}, which is not allowed: ${how}`,
  };
}
