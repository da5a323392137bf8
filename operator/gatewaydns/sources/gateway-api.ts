// What one workload cluster's Gateway API objects say for a GatewayDNS with
// spec.gatewayRef: the Gateway's addresses (only while it is Programmed), its
// listeners' ports, and the host names of the routes it has accepted, narrowed
// to the listeners they attach to. Read the way external-dns's Gateway sources
// read them (a route counts for a parent only where that parent's status says
// Accepted), with the host name intersection of the Gateway API spec. Pure.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { GatewayRef } from '../../../api/index.js';
import {
  uniqueSorted,
  type GatewayPort,
  type RouteHostname,
  type ServiceObservation,
} from '../../model/facts.js';

export const GATEWAY_API_GROUP = 'gateway.networking.k8s.io';

/**
 * The route kinds whose host names are published: the version read (v1, the standard channel's
 * since Gateway API v1.5 for TLSRoute too; a cluster with an older experimental TLSRoute serving
 * only v1alpha2 reads as having none), and the listener protocols each attaches to. A kind whose
 * CRD is not installed is read as none.
 */
export const ROUTE_KINDS = {
  HTTPRoute: { plural: 'httproutes', version: 'v1', protocols: ['HTTP', 'HTTPS'] },
  GRPCRoute: { plural: 'grpcroutes', version: 'v1', protocols: ['HTTP', 'HTTPS'] },
  TLSRoute: { plural: 'tlsroutes', version: 'v1', protocols: ['TLS'] },
} as const;
export type RouteKind = keyof typeof ROUTE_KINDS;
export const ROUTE_KIND_NAMES = Object.keys(ROUTE_KINDS) as RouteKind[];

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface Listener {
  name: string;
  hostname?: string;
  port: number;
  protocol: string;
}

export interface GatewayObject extends KubernetesObject {
  spec?: { gatewayClassName?: string; listeners?: Listener[] };
  status?: {
    addresses?: { type?: string; value: string }[];
    conditions?: Condition[];
  };
}

export interface ParentReference {
  group?: string;
  kind?: string;
  namespace?: string;
  name: string;
  sectionName?: string;
  port?: number;
}

export interface RouteObject extends KubernetesObject {
  spec?: { hostnames?: string[]; parentRefs?: ParentReference[] };
  status?: {
    parents?: { parentRef: ParentReference; controllerName?: string; conditions?: Condition[] }[];
  };
}

export type { RouteHostname };

export interface GatewayObservation extends ServiceObservation {
  routeHostnames: RouteHostname[];
}

/**
 * The Gateway `ref` in one cluster and the routes of every kind there. A Gateway that is missing,
 * not Programmed, or without addresses publishes nothing, and its state says which.
 */
export function observeGateway(
  ref: GatewayRef,
  gateway: GatewayObject | undefined,
  routes: readonly { kind: RouteKind; route: RouteObject }[],
): GatewayObservation {
  if (!gateway)
    return {
      state: 'GatewayNotFound',
      addresses: [],
      ports: [],
      routeHostnames: [],
      message: `no Gateway ${ref.namespace}/${ref.name} in this cluster`,
    };
  const listeners = gateway.spec?.listeners ?? [];
  const ports: GatewayPort[] = listeners
    .map((l) => ({ name: l.name, protocol: l.protocol === 'UDP' ? 'UDP' : 'TCP', port: l.port }))
    .sort((a, b) => a.name.localeCompare(b.name));
  const probePort = listeners[0]?.port;
  const routeHostnames = hostnamesOfRoutes(ref, listeners, routes);
  const base = { ports, routeHostnames, ...(probePort !== undefined ? { probePort } : {}) };
  const programmed = (gateway.status?.conditions ?? []).find((c) => c.type === 'Programmed');
  if (programmed?.status !== 'True')
    return {
      ...base,
      state: 'GatewayNotProgrammed',
      addresses: [],
      message: programmed
        ? `the Gateway is not Programmed (${programmed.status}, ${programmed.reason ?? 'no reason'}${programmed.message ? `: ${programmed.message}` : ''})`
        : 'the Gateway has no Programmed condition yet: its controller has not reported it',
    };
  // An address without a type is an IPAddress (the Gateway API default); other types (a
  // NamedAddress of an implementation) have no meaning in DNS.
  const addresses = uniqueSorted(
    (gateway.status?.addresses ?? [])
      .filter((a) => (a.type ?? 'IPAddress') === 'IPAddress' || a.type === 'Hostname')
      .map((a) => a.value.trim().toLowerCase())
      .filter(Boolean),
  );
  return addresses.length
    ? { ...base, state: 'Ready', addresses }
    : {
        ...base,
        state: 'NoAddresses',
        addresses,
        message: 'the Gateway is Programmed but its status.addresses has no IPAddress or Hostname',
      };
}

/** Every host name of the routes the Gateway accepted, narrowed to the listeners each attaches to. */
function hostnamesOfRoutes(
  ref: GatewayRef,
  listeners: readonly Listener[],
  routes: readonly { kind: RouteKind; route: RouteObject }[],
): RouteHostname[] {
  const found = new Map<string, RouteHostname>();
  const sorted = [...routes].sort((a, b) => byCodePoint(routeName(a), routeName(b)));
  for (const entry of sorted) {
    const { kind, route } = entry;
    const compatible = listeners.filter((l) =>
      (ROUTE_KINDS[kind].protocols as readonly string[]).includes(l.protocol),
    );
    for (const parent of route.status?.parents ?? []) {
      if (!refersTo(parent.parentRef, ref, route.metadata?.namespace ?? '')) continue;
      if (!(parent.conditions ?? []).some((c) => c.type === 'Accepted' && c.status === 'True')) continue;
      const attached = compatible.filter(
        (l) =>
          (parent.parentRef.sectionName === undefined || parent.parentRef.sectionName === l.name) &&
          (parent.parentRef.port === undefined || parent.parentRef.port === l.port),
      );
      for (const listener of attached)
        for (const name of intersectHostnames(route.spec?.hostnames ?? [], listener.hostname))
          if (!found.has(name)) found.set(name, { name, route: routeName(entry) });
    }
  }
  return [...found.values()].sort((a, b) => byCodePoint(a.name, b.name));
}

function routeName({ kind, route }: { kind: RouteKind; route: RouteObject }): string {
  return `${kind} ${route.metadata?.namespace ?? ''}/${route.metadata?.name ?? ''}`;
}

/** A parentRef names the Gateway: group and kind default to Gateway API's Gateway, the namespace to the route's. */
function refersTo(parent: ParentReference, ref: GatewayRef, routeNamespace: string): boolean {
  return (
    (parent.group ?? GATEWAY_API_GROUP) === GATEWAY_API_GROUP &&
    (parent.kind ?? 'Gateway') === 'Gateway' &&
    (parent.namespace ?? routeNamespace) === ref.namespace &&
    parent.name === ref.name
  );
}

/**
 * The host names a route gets on a listener, as the Gateway API spec defines them: a route without
 * host names takes the listener's; a listener without one takes the route's; otherwise the names
 * that match both, the more specific of the two where a wildcard meets a name ("*.example.com"
 * matches any name with at least one more label, not example.com itself). Neither: nothing to publish.
 */
export function intersectHostnames(routeHostnames: readonly string[], listenerHostname?: string): string[] {
  const listener = listenerHostname ? normalize(listenerHostname) : undefined;
  const routes = routeHostnames.map(normalize).filter(Boolean);
  if (!routes.length) return listener ? [listener] : [];
  if (!listener) return uniqueSorted(routes);
  const out = new Set<string>();
  for (const route of routes) {
    if (route === listener || covers(listener, route)) out.add(route);
    else if (covers(route, listener)) out.add(listener);
  }
  return [...out].sort(byCodePoint);
}

/** Whether wildcard `pattern` ("*.example.com") matches `name`, a name or a narrower wildcard. */
function covers(pattern: string, name: string): boolean {
  if (!pattern.startsWith('*.')) return false;
  const suffix = pattern.slice(1); // ".example.com"
  const rest = name.startsWith('*.') ? name.slice(1) : name;
  return rest.endsWith(suffix) && rest.length > suffix.length;
}

function normalize(name: string): string {
  return name.trim().toLowerCase().replace(/\.+$/, '');
}

function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
