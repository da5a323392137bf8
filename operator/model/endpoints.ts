// The pure step from a Service's EndpointSlices (discovery.k8s.io/v1) to the
// endpoints that DNS may name: what the headless resolution type publishes,
// and the ready/total counts that say whether a cluster can serve at all.
import { isIP } from 'node:net';
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { SERVICE_NAME_LABEL } from '../../api/index.js';
import { uniqueSorted, type EndpointPort, type ReadyEndpoint, type ServiceObservation } from './facts.js';

export interface EndpointsObservation {
  ready: ReadyEndpoint[];
  /** Host names of pods that exist but are not ready (or are terminating), and of no ready pod. */
  unreadyHostnames: string[];
  readyCount: number;
  totalCount: number;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** The slices of one Service, chosen from a namespace's slices by the service-name label. */
export function slicesOf(slices: readonly V1EndpointSlice[], service: string): V1EndpointSlice[] {
  return slices.filter((s) => s.metadata?.labels?.[SERVICE_NAME_LABEL] === service);
}

/**
 * The ready endpoints of a Service. Ready is conditions.ready, where unset
 * means ready (the API's "unknown, interpret as ready"); a terminating
 * endpoint is left out even when still serving (or when publishNotReadyAddresses
 * makes it ready), so that clients stop picking it before it goes. FQDN slices
 * carry no addresses to publish. One pod appears once, whatever number of slices
 * (IPv4 and IPv6, or a slice being rewritten) name it.
 */
export function observeEndpoints(slices: readonly V1EndpointSlice[]): EndpointsObservation {
  const all = new Set<string>();
  const ready = new Map<
    string,
    { hostname?: string; addresses: string[]; ports: Map<string, EndpointPort> }
  >();
  const unready = new Set<string>();
  for (const slice of slices) {
    if (slice.addressType !== 'IPv4' && slice.addressType !== 'IPv6') continue;
    const ports = (slice.ports ?? [])
      .filter((p) => p.name && typeof p.port === 'number')
      .map((p) => ({ name: p.name!, protocol: p.protocol ?? 'TCP', port: p.port! }));
    for (const ep of slice.endpoints ?? []) {
      const addresses = (ep.addresses ?? []).filter((a) => isIP(a) !== 0);
      if (!addresses.length) continue;
      const key = endpointKey(ep.targetRef, addresses[0]!);
      all.add(key);
      const hostname = ep.hostname && DNS_LABEL.test(ep.hostname) ? ep.hostname : undefined;
      if (ep.conditions?.ready === false || ep.conditions?.terminating === true) {
        if (hostname) unready.add(hostname);
        continue;
      }
      const entry = ready.get(key) ?? { hostname, addresses: [], ports: new Map<string, EndpointPort>() };
      entry.hostname ??= hostname;
      entry.addresses.push(...addresses);
      for (const p of ports) entry.ports.set(`${p.name}/${p.protocol}`, p);
      ready.set(key, entry);
    }
  }
  const endpoints = [...ready.values()]
    .map((e) => ({
      ...(e.hostname ? { hostname: e.hostname } : {}),
      addresses: uniqueSorted(e.addresses),
      ports: [...e.ports.values()].sort(
        (a, b) => compare(a.name, b.name) || compare(a.protocol, b.protocol) || a.port - b.port,
      ),
    }))
    .sort((a, b) => compare(a.hostname ?? '', b.hostname ?? '') || compare(a.addresses[0]!, b.addresses[0]!));
  const readyHostnames = new Set(endpoints.flatMap((e) => (e.hostname ? [e.hostname] : [])));
  return {
    ready: endpoints,
    unreadyHostnames: [...unready].filter((h) => !readyHostnames.has(h)).sort(),
    readyCount: endpoints.length,
    totalCount: all.size,
  };
}

/**
 * headless: the Service's ready pod addresses, whether the Service is headless
 * or not (any Service with a selector has EndpointSlices).
 */
export function observeHeadlessService(
  service: V1Service | undefined,
  slices: readonly V1EndpointSlice[],
): ServiceObservation {
  if (!service) return { state: 'ServiceNotFound', addresses: [], ports: [] };
  const seen = observeEndpoints(slices);
  const counts = {
    readyEndpoints: seen.readyCount,
    totalEndpoints: seen.totalCount,
    ...(seen.unreadyHostnames.length ? { unreadyHostnames: seen.unreadyHostnames } : {}),
  };
  if (!seen.readyCount)
    return {
      state: 'NoAddresses',
      addresses: [],
      ports: [],
      ...counts,
      message: seen.totalCount
        ? `none of the ${seen.totalCount} endpoints is ready`
        : 'the Service has no endpoints (no EndpointSlice names a pod)',
    };
  return {
    state: 'Ready',
    addresses: uniqueSorted(seen.ready.flatMap((e) => e.addresses)),
    ports: [],
    endpoints: seen.ready,
    ...counts,
  };
}

/** A pod is its targetRef; an endpoint without one (written by hand) is its first address. */
function endpointKey(
  ref: { kind?: string; namespace?: string; name?: string } | undefined,
  first: string,
): string {
  return ref?.name ? `${ref.kind ?? ''}/${ref.namespace ?? ''}/${ref.name}` : `address/${first}`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * clusterIP: a cluster IP with no ready endpoint behind it leads nowhere, so
 * the cluster leaves the names until one is ready again; the counts go to status.
 */
export function withEndpointHealth(
  seen: ServiceObservation,
  slices: readonly V1EndpointSlice[],
): ServiceObservation {
  if (seen.state !== 'Ready') return seen;
  const endpoints = observeEndpoints(slices);
  const counts = { readyEndpoints: endpoints.readyCount, totalEndpoints: endpoints.totalCount };
  if (endpoints.readyCount) return { ...seen, ...counts };
  return {
    state: 'NoAddresses',
    addresses: [],
    ports: [],
    ...counts,
    message: endpoints.totalCount
      ? `none of the ${endpoints.totalCount} endpoints behind the cluster IP is ready`
      : 'no endpoints behind the cluster IP (no EndpointSlice names a pod)',
  };
}
