// Which watches of the workload clusters one GatewayDNS needs (pure): the
// register that holds and stops them is the manager's
// (clusters/workload-watches.ts), shared with Multi-Cluster Services.
import { clusterKey } from '../manager/clusters/cache.js';
import type { WatchNeeds } from '../manager/clusters/workload-watches.js';
import { RESOLUTION_TYPES } from '../model/resolution-types.js';
import type { EffectiveSpec } from '../model/validate.js';

export type { WatchNeeds };

export interface WatchInput {
  /** The GatewayDNS's namespace: its clusters are Clusters of that namespace. */
  namespace: string;
  /** undefined for a GatewayDNS being deleted with an invalid spec: only its mirrors' withdrawal reads. */
  spec: EffectiveSpec | undefined;
  selected: string[];
  /** Every workload cluster of the namespace: where mirrors are written and withdrawn. */
  targets: string[];
  /** Namespaces of the mirror Services it keeps or still has to withdraw. */
  mirrorNamespaces: string[];
}

/**
 * Pure. The source Service's namespace in each selected cluster (its
 * EndpointSlices too, for headless and clusterIP, which follow pod readiness);
 * the mirrors' namespaces in every workload cluster, where the mirror writer
 * reads Services and our EndpointSlices.
 */
export function watchesNamedBy(input: WatchInput): WatchNeeds {
  const items = (clusters: string[], namespaces: string[]) =>
    [
      ...new Set(clusters.flatMap((c) => namespaces.map((n) => `${clusterKey(input.namespace, c)}|${n}`))),
    ].sort();
  const spec = input.spec;
  // A Gateway's watches are cluster-wide and shared (the GATEWAYS and ROUTES informers): nothing to hold here.
  const sources = spec && !spec.gateway ? items(input.selected, [spec.serviceNamespace]) : [];
  const mirrors = items(input.targets, input.mirrorNamespaces);
  return {
    Service: [...new Set([...sources, ...mirrors])].sort(),
    EndpointSlice: spec && RESOLUTION_TYPES[spec.resolutionType].readsEndpointSlices ? sources : [],
    MirrorEndpointSlice: mirrors,
  };
}
