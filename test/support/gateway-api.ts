// Gateway API objects in a workload cluster, as their users write them and as
// a Gateway controller reports on them. No Gateway implementation runs here
// (../shared/notes/gateway-api.md), so the test stands in for its controller
// and writes exactly the status one writes, through the status subresource:
// the Gateway's status.addresses and Accepted/Programmed conditions, a route's
// status.parents[] with controllerName and Accepted/ResolvedRefs.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { ensureNamespace } from './capi.js';
import { statusCode } from './kube.js';

export const GATEWAY_GROUP = 'gateway.networking.k8s.io';
export const CONTROLLER_NAME = 'example.com/test-gateway-controller';
export const GATEWAY_CLASS = 'test-gateways';

export type RouteKind = 'HTTPRoute' | 'GRPCRoute' | 'TLSRoute';
const ROUTES: Record<RouteKind, { plural: string; version: string }> = {
  HTTPRoute: { plural: 'httproutes', version: 'v1' },
  GRPCRoute: { plural: 'grpcroutes', version: 'v1' },
  TLSRoute: { plural: 'tlsroutes', version: 'v1' },
};

export interface ListenerSpec {
  name: string;
  port: number;
  protocol: 'HTTP' | 'HTTPS' | 'TLS' | 'TCP' | 'UDP';
  hostname?: string;
}

export interface ParentRef {
  namespace: string;
  name: string;
  sectionName?: string;
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

function condition(type: string, status: 'True' | 'False', reason: string, generation: number) {
  return {
    type,
    status,
    reason,
    message: status === 'True' ? '' : `${type} is ${status}: ${reason}`,
    observedGeneration: generation,
    lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}

async function createOrReplace(
  api: CustomObjectsApi,
  where: { version: string; plural: string; namespace: string; name: string },
  body: Record<string, unknown>,
): Promise<{ metadata?: { generation?: number } }> {
  const target = { group: GATEWAY_GROUP, ...where };
  try {
    return (await api.createNamespacedCustomObject({ ...target, body })) as {
      metadata?: { generation?: number };
    };
  } catch (err) {
    if (statusCode(err) !== 409) throw err;
    return (await api.patchNamespacedCustomObject({ ...target, body }, mergePatch)) as {
      metadata?: { generation?: number };
    };
  }
}

/** The generation a controller reports its conditions for (observedGeneration). */
async function generationOf(
  api: CustomObjectsApi,
  where: { group: string; version: string; plural: string; namespace: string; name: string },
): Promise<number> {
  const current = (await api.getNamespacedCustomObject(where)) as { metadata: { generation: number } };
  return current.metadata.generation;
}

/** The GatewayClass every test Gateway names, Accepted by our stand-in controller. */
export async function ensureGatewayClass(kc: KubeConfig): Promise<void> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const where = { group: GATEWAY_GROUP, version: 'v1', plural: 'gatewayclasses', name: GATEWAY_CLASS };
  try {
    await api.createClusterCustomObject({
      ...where,
      body: {
        apiVersion: `${GATEWAY_GROUP}/v1`,
        kind: 'GatewayClass',
        metadata: { name: GATEWAY_CLASS },
        spec: { controllerName: CONTROLLER_NAME },
      },
    });
  } catch (err) {
    if (statusCode(err) !== 409) throw err;
  }
  await api.patchClusterCustomObjectStatus(
    { ...where, body: { status: { conditions: [condition('Accepted', 'True', 'Accepted', 1)] } } },
    mergePatch,
  );
}

/** A Gateway (created, or its listeners replaced), without status: the controller's part is setGatewayStatus. */
export async function writeGateway(
  kc: KubeConfig,
  namespace: string,
  name: string,
  listeners: ListenerSpec[],
): Promise<void> {
  await ensureNamespace(kc, namespace);
  await createOrReplace(
    kc.makeApiClient(CustomObjectsApi),
    { version: 'v1', plural: 'gateways', namespace, name },
    {
      apiVersion: `${GATEWAY_GROUP}/v1`,
      kind: 'Gateway',
      metadata: { name, namespace },
      spec: {
        gatewayClassName: GATEWAY_CLASS,
        listeners: listeners.map((l) => ({
          ...l,
          allowedRoutes: { namespaces: { from: 'All' } },
          ...(l.protocol === 'HTTPS' || l.protocol === 'TLS'
            ? {
                tls: l.protocol === 'TLS' ? { mode: 'Passthrough' } : { certificateRefs: [{ name: 'cert' }] },
              }
            : {}),
        })),
      },
    },
  );
}

/** What a Gateway controller reports: Accepted, Programmed (or not), and the addresses it got. */
export async function setGatewayStatus(
  kc: KubeConfig,
  namespace: string,
  name: string,
  status: { programmed: boolean; addresses: string[]; listeners?: string[] },
): Promise<void> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const where = { group: GATEWAY_GROUP, version: 'v1', plural: 'gateways', namespace, name };
  const generation = await generationOf(api, where);
  await api.patchNamespacedCustomObjectStatus(
    {
      ...where,
      body: {
        status: {
          addresses: status.addresses.map((value) => ({
            type: /^[\d.]+$|:/.test(value) ? 'IPAddress' : 'Hostname',
            value,
          })),
          conditions: [
            condition('Accepted', 'True', 'Accepted', generation),
            status.programmed
              ? condition('Programmed', 'True', 'Programmed', generation)
              : condition('Programmed', 'False', 'AddressNotAssigned', generation),
          ],
        },
      },
    },
    mergePatch,
  );
}

/** A route of `kind` (created, or its host names and parents replaced), without status. */
export async function writeRoute(
  kc: KubeConfig,
  kind: RouteKind,
  namespace: string,
  name: string,
  spec: { hostnames: string[]; parentRefs: ParentRef[] },
): Promise<void> {
  await ensureNamespace(kc, namespace);
  const { version, plural } = ROUTES[kind];
  await createOrReplace(
    kc.makeApiClient(CustomObjectsApi),
    { version, plural, namespace, name },
    {
      apiVersion: `${GATEWAY_GROUP}/${version}`,
      kind,
      metadata: { name, namespace },
      spec: {
        parentRefs: spec.parentRefs.map((p) => ({ group: GATEWAY_GROUP, kind: 'Gateway', ...p })),
        hostnames: spec.hostnames,
        rules: [{ backendRefs: [{ name: 'backend', port: kind === 'TLSRoute' ? 8443 : 8080 }] }],
      },
    },
  );
}

/** What the Gateway controller reports on a route: one entry per parent, Accepted or not. */
export async function setRouteParents(
  kc: KubeConfig,
  kind: RouteKind,
  namespace: string,
  name: string,
  parents: { parentRef: ParentRef; accepted: boolean }[],
): Promise<void> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const { version, plural } = ROUTES[kind];
  const where = { group: GATEWAY_GROUP, version, plural, namespace, name };
  const generation = await generationOf(api, where);
  // A merge patch replaces the whole list: parents the controller no longer reports are gone.
  await api.patchNamespacedCustomObjectStatus(
    {
      ...where,
      body: {
        status: {
          parents: parents.map((p) => ({
            parentRef: { group: GATEWAY_GROUP, kind: 'Gateway', ...p.parentRef },
            controllerName: CONTROLLER_NAME,
            conditions: [
              p.accepted
                ? condition('Accepted', 'True', 'Accepted', generation)
                : condition('Accepted', 'False', 'NotAllowedByListeners', generation),
              condition('ResolvedRefs', 'True', 'ResolvedRefs', generation),
            ],
          })),
        },
      },
    },
    mergePatch,
  );
}

export async function deleteRoute(
  kc: KubeConfig,
  kind: RouteKind,
  namespace: string,
  name: string,
): Promise<void> {
  const { version, plural } = ROUTES[kind];
  await kc
    .makeApiClient(CustomObjectsApi)
    .deleteNamespacedCustomObject({ group: GATEWAY_GROUP, version, plural, namespace, name })
    .catch((err: unknown) => {
      if (statusCode(err) !== 404) throw err;
    });
}
