// What one selected workload cluster tells us about the referenced Service:
// the pure step from Kubernetes objects (Service, Nodes) to addresses and
// ports. The reconciler reads the objects; everything here is testable alone.
import { isIP } from 'node:net';
import type { V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';
import type { NodeAddressType, ResolutionType } from '../../api/index.js';

export const CLUSTER_STATES = [
  'Ready',
  'Unreachable',
  'ServiceNotFound',
  'NoAddresses',
  /** clusterIP named a headless Service: it has no cluster IP to publish. */
  'HeadlessService',
  /** The Cluster is paused (Cluster API contract): left as last published, nothing written into it. */
  'Paused',
  /** The Cluster is being deleted: left as last published, its names held, until it is gone. */
  'Deleting',
  /** Cluster API does not report the Cluster up yet: not connected to; left as last published (nothing, if new). */
  'Provisioning',
  /** spec.gatewayRef: no such Gateway in the cluster (or Gateway API is not installed there). */
  'GatewayNotFound',
  /** spec.gatewayRef: the Gateway is not Programmed=True, so its addresses are not published. */
  'GatewayNotProgrammed',
] as const;
export type ClusterState = (typeof CLUSTER_STATES)[number];

/** A port published as SRV records: a Service's node port, or a Gateway listener's port. */
export interface GatewayPort {
  /** The Service port's name (or its number when unnamed), or the listener's name. */
  name: string;
  protocol: string;
  port: number;
}

/** spec.gatewayRef: a host name of a route the cluster's Gateway accepted, and the route ("HTTPRoute shop/web"). */
export interface RouteHostname {
  name: string;
  route: string;
}

export interface EndpointPort {
  /** The Service port's name: only named ports get SRV records (RFC 2782 needs a service label). */
  name: string;
  protocol: string;
  port: number;
}

export interface ReadyEndpoint {
  /** spec.hostname of a pod (a StatefulSet with a governing Service): the pod gets a name of its own. */
  hostname?: string;
  /** IPv4 and IPv6 addresses, sorted (one pod of a dual-stack Service appears in two slices). */
  addresses: string[];
  ports: EndpointPort[];
}

/** What a reachable cluster's Service says, before the cluster's name and reachability are added. */
export interface ServiceObservation {
  state: Exclude<ClusterState, 'Unreachable'>;
  /** IPv4/IPv6 addresses and host names, sorted; for Unreachable the last known ones. */
  addresses: string[];
  /** nodePort: the node ports to publish as SRV records; gatewayRef: the listeners' ports. */
  ports: GatewayPort[];
  /** Why the cluster is not Ready and what to do, when its state alone does not say. */
  message?: string;
  /**
   * The port a health check probes unless spec.healthCheck.port says: the Service's first port
   * (nodePort: its first node port; headless: the first port's numeric targetPort, as pods listen on it).
   */
  probePort?: number;
  /** headless only: the ready endpoints, for per-pod names and SRV records. */
  endpoints?: ReadyEndpoint[];
  /** headless only: host names of pods that are not ready, whose names must not fall to the wildcard. */
  unreadyHostnames?: string[];
  /** Resolution types that read EndpointSlices: how many endpoints there are, and how many ready. */
  readyEndpoints?: number;
  totalEndpoints?: number;
  /** Names the Service asks for with the fqdn annotation. */
  annotatedHostnames?: string[];
  /** spec.gatewayRef: host names of the routes the cluster's Gateway accepted; answered by the clusters that have them. */
  routeHostnames?: RouteHostname[];
}

/**
 * What one reconcile read of a reachable cluster for a GatewayDNS: the one observation that the
 * record sets (through its resolution type's observe) and the mirror both derive from.
 */
export interface ClusterObservation {
  /** The source Service (a mirror of ours is never one). */
  service: V1Service | undefined;
  /** Its EndpointSlices, when the resolution type reads them. */
  slices: readonly V1EndpointSlice[];
  /** The Nodes, when the resolution type reads them. */
  nodes: readonly V1Node[];
}

export interface ClusterFacts extends Omit<ServiceObservation, 'state'> {
  cluster: string;
  state: ClusterState;
  error?: string;
  /** When the addresses were read (RFC 3339). */
  lastSeen?: string;
  /**
   * Unreachable since before this operator process started: the addresses
   * come from status, and per-pod names, SRV ports and annotated names are not
   * known. The record set the cluster had, where one exists, is the better
   * last word and is left as it is.
   */
  recoveredFromStatus?: boolean;
  /** This reconcile's observation of a reachable cluster; never remembered beyond it. */
  observed?: ClusterObservation;
}

export interface ObserveOptions {
  resolutionType: ResolutionType;
  nodeAddressTypes: NodeAddressType[];
}

/** Addresses and ports of a Service as the GatewayDNS's resolution type sees them. */
export function observeService(
  service: V1Service | undefined,
  nodes: V1Node[],
  opts: ObserveOptions,
): ServiceObservation {
  const seen = observeServiceAddresses(service, nodes, opts);
  const probePort = probePortOf(service, opts.resolutionType);
  return probePort === undefined ? seen : { ...seen, probePort };
}

function probePortOf(service: V1Service | undefined, resolutionType: ResolutionType): number | undefined {
  const first = service?.spec?.ports?.[0];
  if (!first) return undefined;
  if (resolutionType === 'nodePort') return first.nodePort || undefined;
  if (resolutionType === 'headless')
    return typeof first.targetPort === 'number' ? first.targetPort : first.port;
  return first.port;
}

function observeServiceAddresses(
  service: V1Service | undefined,
  nodes: V1Node[],
  opts: ObserveOptions,
): ServiceObservation {
  if (!service) return { state: 'ServiceNotFound', addresses: [], ports: [] };
  if (opts.resolutionType === 'loadBalancer') {
    const addresses = uniqueSorted(
      (service.status?.loadBalancer?.ingress ?? []).map((i) => i.ip || i.hostname || '').filter(Boolean),
    );
    return { state: addresses.length ? 'Ready' : 'NoAddresses', addresses, ports: [] };
  }
  if (opts.resolutionType === 'clusterIP') return observeClusterIPs(service);
  const ports: GatewayPort[] = (service.spec?.ports ?? [])
    .filter((p) => typeof p.nodePort === 'number' && p.nodePort > 0)
    .map((p) => ({ name: p.name || String(p.port), protocol: p.protocol ?? 'TCP', port: p.nodePort! }))
    .sort((a, b) => a.name.localeCompare(b.name) || a.protocol.localeCompare(b.protocol));
  const addresses = uniqueSorted(
    nodes.filter(isReady).flatMap((n) => preferredAddress(n, opts.nodeAddressTypes) ?? []),
  );
  const state = addresses.length && ports.length ? 'Ready' : 'NoAddresses';
  return { state, addresses, ports };
}

/**
 * spec.clusterIPs (both families of a dual-stack Service); spec.clusterIP for
 * objects written before clusterIPs existed. "None" marks a headless Service,
 * whose pods only the headless resolution type can publish.
 */
function observeClusterIPs(service: V1Service): ServiceObservation {
  const ips = service.spec?.clusterIPs?.length
    ? service.spec.clusterIPs
    : service.spec?.clusterIP
      ? [service.spec.clusterIP]
      : [];
  if (ips.includes('None'))
    return {
      state: 'HeadlessService',
      addresses: [],
      ports: [],
      message:
        'the Service is headless (clusterIP: None) and has no cluster IP to publish; use resolutionType: headless for its pod addresses',
    };
  const addresses = uniqueSorted(ips.filter((ip) => isIP(ip) !== 0));
  return { state: addresses.length ? 'Ready' : 'NoAddresses', addresses, ports: [] };
}

function isReady(node: V1Node): boolean {
  if (node.spec?.unschedulable) return false;
  return (node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** The node's address of the first preferred type it has (ExternalIP, else InternalIP by default). */
function preferredAddress(node: V1Node, types: NodeAddressType[]): string | undefined {
  const addrs = node.status?.addresses ?? [];
  for (const type of types) {
    const found = addrs.find((a) => a.type === type && a.address);
    if (found) return found.address;
  }
  return undefined;
}

export function uniqueSorted(values: string[]): string[] {
  return [...new Set(values)].sort(compareAddresses);
}

/** IPv4 before IPv6 before names, each in a stable order, so that equal sets compare equal. */
function compareAddresses(a: string, b: string): number {
  const rank = (v: string) => (isIP(v) === 4 ? 0 : isIP(v) === 6 ? 1 : 2);
  return rank(a) - rank(b) || a.localeCompare(b);
}
