// Pure: whose a Service or EndpointSlice in a consuming cluster is, and what
// of it the mirror compares. The operator changes only objects it created for
// this GatewayDNS; it tells them by the labels it puts on them.
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import {
  CONTROLLER_NAME,
  GATEWAYDNS_NAME_LABEL,
  GATEWAYDNS_NAMESPACE_LABEL,
  MANAGED_BY_LABEL,
} from '../../../../api/index.js';
import { canonical } from '../../../manager/runtime/equal.js';
import type { MirrorTarget, ServiceManifest, SliceManifest } from './desired.js';

export type Ownership =
  | { owner: 'ours' }
  /** Ours, but the mirror of another GatewayDNS of the namespace. */
  | { owner: 'gatewaydns'; gatewayDns: string }
  /** Not created by capi-dns: never changed. */
  | { owner: 'foreign'; managers: string[] };

interface Meta {
  metadata?: {
    labels?: Record<string, string>;
    managedFields?: { manager?: string }[];
  };
}

export function ownershipOf(object: Meta, target: MirrorTarget): Ownership {
  const labels = object.metadata?.labels ?? {};
  const ns = labels[GATEWAYDNS_NAMESPACE_LABEL];
  const name = labels[GATEWAYDNS_NAME_LABEL];
  if (labels[MANAGED_BY_LABEL] !== CONTROLLER_NAME || !ns || !name)
    return {
      owner: 'foreign',
      managers: [...new Set((object.metadata?.managedFields ?? []).flatMap((f) => f.manager ?? []))].sort(),
    };
  if (ns === target.gatewayDns.namespace && name === target.gatewayDns.name) return { owner: 'ours' };
  return { owner: 'gatewaydns', gatewayDns: `${ns}/${name}` };
}

/** Why a name is taken, for status. */
export function takenBy(kind: string, namespace: string, name: string, o: Ownership): string {
  if (o.owner === 'gatewaydns')
    return `${kind} ${namespace}/${name} is the mirror of gatewaydns ${o.gatewayDns}`;
  const by = o.owner === 'foreign' && o.managers.length ? ` (managed by ${o.managers.join(', ')})` : '';
  return `${kind} ${namespace}/${name} exists and was not created by capi-dns${by}; it is left alone`;
}

/** What the mirror sets on a Service, as found in a live object (with the API server's defaults) or a manifest. */
export function serviceContent(s: V1Service | ServiceManifest, labelKeys: string[]): string {
  const labels = s.metadata?.labels ?? {};
  return canonical({
    labels: Object.fromEntries(labelKeys.map((k) => [k, labels[k]])),
    type: s.spec?.type ?? 'ClusterIP',
    headless: s.spec?.clusterIP === 'None',
    externalName: s.spec?.externalName ?? '',
    ports: (s.spec?.ports ?? [])
      .map((p) => ({
        name: p.name ?? '',
        port: p.port,
        protocol: p.protocol ?? 'TCP',
        targetPort: p.targetPort === undefined ? p.port : p.targetPort,
      }))
      .sort((a, b) => a.port - b.port || a.protocol.localeCompare(b.protocol)),
  });
}

/** What the mirror sets on an EndpointSlice, owner included (the Service's UID changes when it is recreated). */
export function sliceContent(
  s: V1EndpointSlice | (SliceManifest & { metadata: { ownerReferences?: { uid: string }[] } }),
  labelKeys: string[],
): string {
  const labels = s.metadata?.labels ?? {};
  return canonical({
    labels: Object.fromEntries(labelKeys.map((k) => [k, labels[k]])),
    owners: (s.metadata?.ownerReferences ?? []).map((o) => o.uid),
    addressType: s.addressType,
    endpoints: (s.endpoints ?? []).map((e) => ({
      addresses: e.addresses,
      conditions: {
        ready: e.conditions?.ready ?? true,
        serving: e.conditions?.serving ?? e.conditions?.ready ?? true,
        terminating: e.conditions?.terminating ?? false,
      },
      hostname: e.hostname ?? '',
    })),
    ports: (s.ports ?? []).map((p) => ({ name: p.name ?? '', port: p.port, protocol: p.protocol ?? 'TCP' })),
  });
}
