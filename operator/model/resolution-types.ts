// One entry per resolution type: what it reads of a workload cluster, how
// that becomes addresses, and what it publishes beyond A/AAAA. The record
// sets (gatewaydns/sources/reader.ts, plan/desired.ts), the mirror (gatewaydns/apply/mirror/reconciler.ts)
// and the controller's event routing read this table; a new type is one
// entry, not a branch in each of them. Pure.
import type { V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';
import type { ResolutionType } from '../../api/index.js';
import { observeHeadlessService, withEndpointHealth } from './endpoints.js';
import { observeService, type ServiceObservation } from './facts.js';
import type { EffectiveSpec } from './validate.js';

export interface ResolutionTypeEntry {
  /** Addresses are the Nodes' (so a Node change concerns it), and the node ports are published as SRV. */
  nodePorts: boolean;
  /** Per-pod: the ready endpoints become per-pod names and SRV records, and a mirror is a headless Service. */
  headless: boolean;
  /** The record sets read the Service's EndpointSlices (its pods, or whether any is ready). */
  readsEndpointSlices: boolean;
  /** What a reachable cluster's objects say, for this type. */
  observe(
    service: V1Service | undefined,
    slices: readonly V1EndpointSlice[],
    nodes: readonly V1Node[],
    spec: Pick<EffectiveSpec, 'resolutionType' | 'nodeAddressTypes'>,
  ): ServiceObservation;
}

export const RESOLUTION_TYPES: Readonly<Record<ResolutionType, ResolutionTypeEntry>> = {
  loadBalancer: {
    nodePorts: false,
    headless: false,
    readsEndpointSlices: false,
    observe: (service, _slices, nodes, spec) => observeService(service, [...nodes], spec),
  },
  nodePort: {
    nodePorts: true,
    headless: false,
    readsEndpointSlices: false,
    observe: (service, _slices, nodes, spec) => observeService(service, [...nodes], spec),
  },
  // A cluster IP with no ready endpoint behind it leads nowhere: the slices say whether one is ready.
  clusterIP: {
    nodePorts: false,
    headless: false,
    readsEndpointSlices: true,
    observe: (service, slices, _nodes, spec) => withEndpointHealth(observeService(service, [], spec), slices),
  },
  headless: {
    nodePorts: false,
    headless: true,
    readsEndpointSlices: true,
    observe: (service, slices) => observeHeadlessService(service, slices),
  },
};

/** The entry of a spec's type; an unknown or missing type (a raw spec) reads as loadBalancer, the default. */
export function resolutionTypeOf(type: string | undefined): ResolutionTypeEntry {
  return (type && RESOLUTION_TYPES[type as ResolutionType]) || RESOLUTION_TYPES.loadBalancer;
}
