// EndpointSlices written exactly as the EndpointSlice controller writes them
// (the test API servers run no controllers): labels kubernetes.io/service-name
// and endpointslice.kubernetes.io/managed-by, an owner reference to the
// Service, addressType, endpoints with conditions, hostname and targetRef, and
// the Service's ports by name.
import { CoreV1Api, DiscoveryV1Api, type KubeConfig } from '@kubernetes/client-node';
import { apply, statusCode } from './kube.js';

export interface TestEndpoint {
  pod: string;
  address: string;
  ready?: boolean;
  terminating?: boolean;
  hostname?: string;
  nodeName?: string;
}

export interface SliceOptions {
  namespace: string;
  service: string;
  name: string;
  addressType: 'IPv4' | 'IPv6';
  endpoints: TestEndpoint[];
  ports: { name: string; port: number; protocol?: string }[];
}

export async function writeEndpointSlice(kc: KubeConfig, opts: SliceOptions): Promise<void> {
  const svc = await kc.makeApiClient(CoreV1Api).readNamespacedService({
    name: opts.service,
    namespace: opts.namespace,
  });
  await apply(kc, [
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: opts.name,
        namespace: opts.namespace,
        labels: {
          'kubernetes.io/service-name': opts.service,
          'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
        },
        ownerReferences: [
          {
            apiVersion: 'v1',
            kind: 'Service',
            name: opts.service,
            uid: svc.metadata!.uid!,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      addressType: opts.addressType,
      endpoints: opts.endpoints.map((e) => {
        const ready = (e.ready ?? true) && !e.terminating;
        return {
          addresses: [e.address],
          // What the controller derives from the pod: ready only when not terminating
          // (publishNotReadyAddresses aside); serving follows the pod's readiness.
          conditions: { ready, serving: e.ready ?? true, terminating: e.terminating ?? false },
          ...(e.hostname ? { hostname: e.hostname } : {}),
          targetRef: { kind: 'Pod', namespace: opts.namespace, name: e.pod, uid: `uid-${e.pod}` },
          nodeName: e.nodeName ?? 'node-1',
        };
      }),
      ports: opts.ports.map((p) => ({ name: p.name, port: p.port, protocol: p.protocol ?? 'TCP' })),
    } as Parameters<typeof apply>[1][number],
  ]);
}

export async function deleteEndpointSlice(kc: KubeConfig, namespace: string, name: string): Promise<void> {
  try {
    await kc.makeApiClient(DiscoveryV1Api).deleteNamespacedEndpointSlice({ name, namespace });
  } catch (err) {
    if (statusCode(err) !== 404) throw err;
  }
}
