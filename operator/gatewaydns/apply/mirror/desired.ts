// Pure: the mirror of one GatewayDNS in one consuming workload cluster, from
// what the source clusters contribute. A Service without a selector (so that
// no controller there writes its endpoints) and one EndpointSlice per source
// cluster and address family, labelled so that kube-proxy and CoreDNS find
// them (kubernetes.io/service-name), other controllers leave them alone
// (endpointslice.kubernetes.io/managed-by) and a reader sees where the
// endpoints come from (multicluster.kubernetes.io/source-cluster).
import {
  ENDPOINTSLICE_MANAGED_BY_LABEL,
  MIRROR_CONTROLLER,
  SERVICE_NAME_LABEL,
  MCS_SOURCE_CLUSTER_LABEL,
  mirrorSliceName,
  gatewayDnsLabels,
} from '../../../../api/index.js';
import { sortPorts, type AddressFamily, type MirrorServicePort, type MirrorSource } from './observe.js';

export interface MirrorTarget {
  /** The GatewayDNS: its management namespace and name. */
  gatewayDns: { namespace: string; name: string };
  /** Where the mirror lives in each consuming cluster. */
  namespace: string;
  name: string;
  /** resolutionType headless: clusterIP None, so that per-pod names work in the consuming cluster. */
  headless: boolean;
}

export type MirrorServiceKind = 'ClusterIP' | 'Headless' | 'ExternalName';

export interface ServiceManifest {
  apiVersion: 'v1';
  kind: 'Service';
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  spec: {
    type: 'ClusterIP' | 'ExternalName';
    clusterIP?: 'None';
    externalName?: string;
    ports?: { name?: string; port: number; protocol: string; targetPort: number }[];
  };
}

export interface SliceManifest {
  apiVersion: 'discovery.k8s.io/v1';
  kind: 'EndpointSlice';
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  addressType: AddressFamily;
  endpoints: {
    addresses: string[];
    conditions: { ready: boolean; serving: boolean; terminating: boolean };
    hostname?: string;
  }[];
  ports: { name: string; port: number; protocol: string }[];
}

export interface DesiredMirror {
  kind: MirrorServiceKind;
  service: ServiceManifest;
  slices: SliceManifest[];
  /** What the mirror leaves out, for status (host names beside IPs, a second ExternalName). */
  notes: string[];
}

export type MirrorPlan = { desired: DesiredMirror } | { none: string };

/** Labels on the mirror Service: ours, and which GatewayDNS it belongs to (tenancy and ownership). */
export function mirrorServiceLabels(target: MirrorTarget): Record<string, string> {
  return gatewayDnsLabels(target.gatewayDns.namespace, target.gatewayDns.name);
}

export function mirrorSliceLabels(target: MirrorTarget, sourceCluster: string): Record<string, string> {
  return {
    ...mirrorServiceLabels(target),
    [SERVICE_NAME_LABEL]: target.name,
    [ENDPOINTSLICE_MANAGED_BY_LABEL]: MIRROR_CONTROLLER,
    [MCS_SOURCE_CLUSTER_LABEL]: sourceCluster,
  };
}

/**
 * The mirror for the given sources (reachable ones and the last known state of
 * unreachable ones), or why there is none: no source cluster has the Service.
 */
export function desiredMirror(target: MirrorTarget, sources: readonly MirrorSource[]): MirrorPlan {
  const ordered = [...sources].sort((a, b) => compare(a.cluster, b.cluster));
  if (!ordered.length) return { none: 'no selected cluster has the Service' };
  const notes: string[] = [];
  const ports = servicePorts(ordered);
  const hasIPs = ordered.some((s) => s.endpoints.length);
  const hostnames = [...new Set(ordered.flatMap((s) => s.hostnames))].sort();
  const meta = { name: target.name, namespace: target.namespace, labels: mirrorServiceLabels(target) };
  if (!hasIPs && hostnames.length && !target.headless) {
    // A Service can name one host: the first, and status says which were left out.
    if (hostnames.length > 1)
      notes.push(`ExternalName ${hostnames[0]}; other host names left out: ${hostnames.slice(1).join(', ')}`);
    return {
      desired: {
        kind: 'ExternalName',
        service: {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: meta,
          spec: { type: 'ExternalName', externalName: hostnames[0]!, ...(ports.length ? { ports } : {}) },
        },
        slices: [],
        notes,
      },
    };
  }
  if (hasIPs && hostnames.length)
    notes.push(
      `host names left out (a Service with endpoints cannot also name a host): ${hostnames.join(', ')}`,
    );
  if (!target.headless && !ports.length)
    return { none: 'the source Service has no ports, and a Service with a cluster IP needs one' };
  const slices = ordered.flatMap((s) =>
    (['IPv4', 'IPv6'] as const).flatMap((family) => {
      const endpoints = s.endpoints.filter((e) => e.family === family);
      if (!endpoints.length) return [];
      const slice: SliceManifest = {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: mirrorSliceName(target.name, s.cluster, family),
          namespace: target.namespace,
          labels: mirrorSliceLabels(target, s.cluster),
        },
        addressType: family,
        endpoints: endpoints.map((e) => ({
          addresses: [e.address],
          conditions: { ready: e.ready, serving: e.serving, terminating: e.terminating },
          ...(e.hostname ? { hostname: e.hostname } : {}),
        })),
        ports: sortPorts(s.endpointPorts).map((p) => ({ name: p.name, port: p.port, protocol: p.protocol })),
      };
      return [slice];
    }),
  );
  return {
    desired: {
      kind: target.headless ? 'Headless' : 'ClusterIP',
      service: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: meta,
        spec: {
          type: 'ClusterIP',
          ...(target.headless ? { clusterIP: 'None' as const } : {}),
          ports,
        },
      },
      slices,
      notes,
    },
  };
}

/**
 * The union of the source clusters' Service ports by name and protocol, the
 * first cluster (by name) deciding the port number: one mirror Service has one
 * set of ports, while each slice carries its own cluster's endpoint ports.
 */
function servicePorts(sources: readonly MirrorSource[]): ServiceManifest['spec']['ports'] & object {
  const byKey = new Map<string, MirrorServicePort>();
  for (const s of sources)
    for (const p of s.servicePorts)
      if (!byKey.has(`${p.name}/${p.protocol}`)) byKey.set(`${p.name}/${p.protocol}`, p);
  const ports = sortPorts([...byKey.values()]);
  // Two entries with one port number and protocol are refused by the API server: the first stays.
  const seen = new Set<string>();
  return ports
    .filter((p) => {
      const key = `${p.port}/${p.protocol}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .map((p) => ({
      ...(p.name ? { name: p.name } : {}),
      port: p.port,
      protocol: p.protocol,
      targetPort: p.targetPort,
    }));
}

/** The mirror Service must be deleted and created again to become this kind: clusterIP and type are immutable that way. */
export function serviceKindOf(service: { spec?: { type?: string; clusterIP?: string } }): MirrorServiceKind {
  if (service.spec?.type === 'ExternalName') return 'ExternalName';
  return service.spec?.clusterIP === 'None' ? 'Headless' : 'ClusterIP';
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
