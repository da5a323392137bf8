// The pure step from what a source cluster has (its Service, EndpointSlices,
// Nodes) to what the mirror of that Service holds for it: the ports the
// mirror Service offers, and the endpoints (address, host name, conditions)
// its EndpointSlice carries, for each resolution type.
import { isIP } from 'node:net';
import type { V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';
import type { NodeAddressType, ResolutionType } from '../../../../api/index.js';
import { slicesOf } from '../../../model/endpoints.js';
import { observeService } from '../../../model/facts.js';

export type AddressFamily = 'IPv4' | 'IPv6';

/** A port of the mirror Service: the source Service's port, name and protocol. */
export interface MirrorServicePort {
  /** "" for the one unnamed port a single-port Service may have. */
  name: string;
  port: number;
  protocol: string;
  /** Informational for a Service without a selector (the EndpointSlice's port is used); node port for nodePort. */
  targetPort: number;
}

/** A port the endpoints of one source cluster listen on, matched to the Service port by name. */
export interface MirrorEndpointPort {
  name: string;
  port: number;
  protocol: string;
}

export interface MirrorEndpoint {
  address: string;
  family: AddressFamily;
  /** headless: the pod's host name, for <hostname>.<service>.<namespace>.svc names. */
  hostname?: string;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
}

/** What one reachable source cluster contributes to the mirror. */
export interface MirrorSource {
  cluster: string;
  servicePorts: MirrorServicePort[];
  endpointPorts: MirrorEndpointPort[];
  endpoints: MirrorEndpoint[];
  /** loadBalancer ingress host names: an ExternalName Service when no cluster gives an IP. */
  hostnames: string[];
}

export interface MirrorObserveOptions {
  resolutionType: ResolutionType;
  nodeAddressTypes: NodeAddressType[];
  /**
   * clusterIP: whether a ready pod is behind the cluster IP (the GatewayDNS's
   * own reading of the cluster, state Ready): the endpoint's ready condition.
   */
  clusterReady: boolean;
}

/** The source cluster's share of the mirror; undefined when the cluster has no such Service. */
export function observeMirrorSource(
  cluster: string,
  service: V1Service | undefined,
  slices: readonly V1EndpointSlice[],
  nodes: readonly V1Node[],
  opts: MirrorObserveOptions,
): MirrorSource | undefined {
  if (!service) return undefined;
  const ports = (service.spec?.ports ?? []).map((p) => ({
    name: p.name ?? '',
    port: p.port,
    protocol: p.protocol ?? 'TCP',
    nodePort: p.nodePort,
  }));
  const byPort = (targetPort: (p: (typeof ports)[number]) => number | undefined) =>
    ports.flatMap((p) => {
      const t = targetPort(p);
      return t ? [{ name: p.name, port: p.port, protocol: p.protocol, targetPort: t }] : [];
    });
  const base = { cluster, hostnames: [] as string[] };
  switch (opts.resolutionType) {
    case 'loadBalancer': {
      const ingress = observeService(service, [], opts).addresses;
      return {
        ...base,
        servicePorts: sortPorts(byPort((p) => p.port)),
        endpointPorts: sortPorts(ports.map(({ name, port, protocol }) => ({ name, port, protocol }))),
        endpoints: ingress.filter((a) => isIP(a) !== 0).map((a) => endpoint(a, true)),
        hostnames: ingress.filter((a) => isIP(a) === 0),
      };
    }
    case 'nodePort': {
      const withNodePort = ports.filter((p) => p.nodePort);
      return {
        ...base,
        // The node ports as target ports, as the issue asks: what a client of the mirror reaches.
        servicePorts: sortPorts(byPort((p) => p.nodePort)),
        endpointPorts: sortPorts(
          withNodePort.map((p) => ({ name: p.name, port: p.nodePort!, protocol: p.protocol })),
        ),
        endpoints: observeService(service, [...nodes], opts)
          .addresses.filter((a) => isIP(a) !== 0)
          .map((a) => endpoint(a, true)),
      };
    }
    case 'clusterIP': {
      const ips = service.spec?.clusterIPs?.length
        ? service.spec.clusterIPs
        : service.spec?.clusterIP
          ? [service.spec.clusterIP]
          : [];
      return {
        ...base,
        servicePorts: sortPorts(byPort((p) => p.port)),
        endpointPorts: sortPorts(ports.map(({ name, port, protocol }) => ({ name, port, protocol }))),
        endpoints: ips.filter((ip) => isIP(ip) !== 0).map((ip) => endpoint(ip, opts.clusterReady)),
      };
    }
    case 'headless':
      return observeHeadless(base, ports, slicesOf(slices, service.metadata?.name ?? ''));
  }
}

/**
 * The pods of the Service's EndpointSlices with their conditions as the
 * EndpointSlice controller wrote them (ready unset means ready, serving unset
 * follows ready), so that kube-proxy and CoreDNS in the consuming cluster
 * treat them as they are treated at home. One endpoint per address: consumers
 * use only an endpoint's first address.
 */
function observeHeadless(
  base: { cluster: string; hostnames: string[] },
  ports: { name: string; port: number; protocol: string }[],
  slices: readonly V1EndpointSlice[],
): MirrorSource {
  const endpoints = new Map<string, MirrorEndpoint>();
  const endpointPorts = new Map<string, MirrorEndpointPort>();
  for (const slice of slices) {
    if (slice.addressType !== 'IPv4' && slice.addressType !== 'IPv6') continue;
    for (const p of slice.ports ?? [])
      if (typeof p.port === 'number') {
        const port = { name: p.name ?? '', port: p.port, protocol: p.protocol ?? 'TCP' };
        endpointPorts.set(`${port.name}/${port.protocol}`, port);
      }
    for (const ep of slice.endpoints ?? []) {
      const address = ep.addresses?.find((a) => isIP(a) !== 0);
      if (!address) continue;
      const ready = ep.conditions?.ready ?? true;
      endpoints.set(address, {
        ...endpoint(address, ready),
        ...(ep.hostname ? { hostname: ep.hostname } : {}),
        serving: ep.conditions?.serving ?? ready,
        terminating: ep.conditions?.terminating ?? false,
      });
    }
  }
  const sorted = sortPorts([...endpointPorts.values()]);
  return {
    ...base,
    servicePorts: sortPorts(
      ports.map((p) => ({
        name: p.name,
        port: p.port,
        protocol: p.protocol,
        targetPort: sorted.find((e) => e.name === p.name && e.protocol === p.protocol)?.port ?? p.port,
      })),
    ),
    endpointPorts: sorted,
    endpoints: [...endpoints.values()].sort((a, b) => compareAddress(a.address, b.address)),
  };
}

function endpoint(address: string, ready: boolean): MirrorEndpoint {
  return {
    address,
    family: isIP(address) === 6 ? 'IPv6' : 'IPv4',
    ready,
    serving: ready,
    terminating: false,
  };
}

export function sortPorts<T extends { name: string; protocol: string; port: number }>(ports: T[]): T[] {
  return [...ports].sort(
    (a, b) => compare(a.name, b.name) || compare(a.protocol, b.protocol) || a.port - b.port,
  );
}

function compareAddress(a: string, b: string): number {
  return (isIP(a) === 6 ? 1 : 0) - (isIP(b) === 6 ? 1 : 0) || compare(a, b);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
