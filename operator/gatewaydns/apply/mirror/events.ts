// Pure: which GatewayDNS a change in a workload cluster concerns, for the
// mirror's part (the controller's map function calls this beside its own):
// drift of a mirror object we keep, a Service taking or freeing a mirror's
// name, a namespace appearing that a mirror lives in.
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  GATEWAYDNS_NAME_LABEL,
  GATEWAYDNS_NAMESPACE_LABEL,
  type GatewayDNSSpec,
} from '../../../../api/index.js';

export interface MirrorWatcher {
  key: string;
  spec?: Partial<GatewayDNSSpec>;
}

/** The mirror's "namespace/name" as the spec asks for it, defaults filled in; undefined without spec.mirror. */
export function mirrorServiceOf(spec: Partial<GatewayDNSSpec> | undefined): string | undefined {
  if (!spec?.mirror) return undefined;
  const [namespace = '', name = ''] = (spec.service ?? '/').split('/');
  return `${spec.mirror.namespace ?? namespace}/${spec.mirror.name ?? name}`;
}

export function mirrorKeysFor(
  kind: string,
  object: KubernetesObject,
  /** The management namespace of the cluster the change comes from: the tenancy wall. */
  namespace: string,
  gatewayDns: readonly MirrorWatcher[],
): string[] {
  const labels = object.metadata?.labels ?? {};
  const keys = new Set<string>();
  if (
    (kind === 'Service' || kind === 'MirrorEndpointSlice') &&
    labels[GATEWAYDNS_NAMESPACE_LABEL] === namespace &&
    labels[GATEWAYDNS_NAME_LABEL]
  )
    keys.add(`${namespace}/${labels[GATEWAYDNS_NAME_LABEL]}`);
  if (kind === 'Service') {
    const service = `${object.metadata?.namespace}/${object.metadata?.name}`;
    for (const gw of gatewayDns) if (mirrorServiceOf(gw.spec) === service) keys.add(gw.key);
  }
  if (kind === 'Namespace')
    for (const gw of gatewayDns)
      if (mirrorServiceOf(gw.spec)?.split('/')[0] === object.metadata?.name) keys.add(gw.key);
  return [...keys].sort();
}
