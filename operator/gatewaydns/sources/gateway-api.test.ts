import { describe, expect, it } from '@jest/globals';
import {
  intersectHostnames,
  observeGateway,
  type GatewayObject,
  type RouteKind,
  type RouteObject,
} from './gateway-api.js';

const REF = { namespace: 'infra', name: 'edge' };

function gateway(opts: {
  listeners?: { name: string; port: number; protocol: string; hostname?: string }[];
  addresses?: { type?: string; value: string }[];
  programmed?: 'True' | 'False';
}): GatewayObject {
  return {
    metadata: { namespace: 'infra', name: 'edge' },
    spec: { listeners: opts.listeners ?? [{ name: 'http', port: 80, protocol: 'HTTP' }] },
    status: {
      addresses: opts.addresses ?? [{ type: 'IPAddress', value: '203.0.113.10' }],
      conditions: opts.programmed
        ? [
            {
              type: 'Programmed',
              status: opts.programmed,
              reason: opts.programmed === 'True' ? 'Programmed' : 'Invalid',
            },
          ]
        : [],
    },
  };
}

function route(
  hostnames: string[],
  parents: { name?: string; namespace?: string; sectionName?: string; accepted?: boolean }[],
  name = 'web',
): RouteObject {
  return {
    metadata: { namespace: 'shop', name },
    spec: {
      hostnames,
      parentRefs: parents.map((p) => ({ name: p.name ?? 'edge', namespace: p.namespace ?? 'infra' })),
    },
    status: {
      parents: parents.map((p) => ({
        parentRef: {
          name: p.name ?? 'edge',
          namespace: p.namespace ?? 'infra',
          ...(p.sectionName ? { sectionName: p.sectionName } : {}),
        },
        controllerName: 'example.com/gateway-controller',
        conditions: [
          { type: 'Accepted', status: p.accepted === false ? 'False' : 'True', reason: 'Accepted' },
        ],
      })),
    },
  };
}

const http = (r: RouteObject): { kind: RouteKind; route: RouteObject } => ({ kind: 'HTTPRoute', route: r });

describe('observeGateway', () => {
  it('publishes the addresses of a Programmed Gateway, its listeners as ports, and its first listener as the probe port', () => {
    const seen = observeGateway(
      REF,
      gateway({
        programmed: 'True',
        listeners: [
          { name: 'https', port: 443, protocol: 'HTTPS' },
          { name: 'http', port: 80, protocol: 'HTTP' },
        ],
        addresses: [
          { type: 'IPAddress', value: '2001:db8::1' },
          { value: '203.0.113.10' },
          { type: 'Hostname', value: 'LB.example.com' },
          { type: 'example.com/NamedAddress', value: 'pool-a' },
        ],
      }),
      [],
    );
    expect(seen).toMatchObject({
      state: 'Ready',
      addresses: ['203.0.113.10', '2001:db8::1', 'lb.example.com'],
      ports: [
        { name: 'http', protocol: 'TCP', port: 80 },
        { name: 'https', protocol: 'TCP', port: 443 },
      ],
      probePort: 443,
    });
  });

  it('says why nothing is published: no Gateway, not Programmed, no usable address', () => {
    expect(observeGateway(REF, undefined, [])).toMatchObject({
      state: 'GatewayNotFound',
      addresses: [],
      message: 'no Gateway infra/edge in this cluster',
    });
    const notProgrammed = observeGateway(REF, gateway({ programmed: 'False' }), []);
    expect(notProgrammed).toMatchObject({ state: 'GatewayNotProgrammed', addresses: [] });
    expect(notProgrammed.message).toContain('not Programmed (False, Invalid');
    expect(observeGateway(REF, gateway({}), []).message).toContain('no Programmed condition yet');
    expect(observeGateway(REF, gateway({ programmed: 'True', addresses: [] }), [])).toMatchObject({
      state: 'NoAddresses',
    });
  });

  it("takes the host names of routes the Gateway accepted, naming the route, and not those it refused or another Gateway's", () => {
    const seen = observeGateway(REF, gateway({ programmed: 'True' }), [
      http(route(['shop.apps.corp.internal', 'Cart.Apps.Corp.Internal.'], [{}])),
      http(route(['refused.apps.corp.internal'], [{ accepted: false }], 'refused')),
      http(route(['other.apps.corp.internal'], [{ name: 'other-gateway' }], 'elsewhere')),
      http(route(['ns.apps.corp.internal'], [{ namespace: 'other-ns' }], 'other-namespace')),
    ]);
    expect(seen.routeHostnames).toEqual([
      { name: 'cart.apps.corp.internal', route: 'HTTPRoute shop/web' },
      { name: 'shop.apps.corp.internal', route: 'HTTPRoute shop/web' },
    ]);
  });

  it('keeps the host names of a Gateway that is not Programmed: what is published depends on its addresses alone', () => {
    const seen = observeGateway(REF, gateway({ programmed: 'False' }), [http(route(['a.x.test'], [{}]))]);
    expect(seen.routeHostnames).toEqual([{ name: 'a.x.test', route: 'HTTPRoute shop/web' }]);
  });

  it('narrows a route to the listeners it attaches to: by sectionName, and by protocol for its kind', () => {
    const gw = gateway({
      programmed: 'True',
      listeners: [
        { name: 'shop', port: 443, protocol: 'HTTPS', hostname: '*.shop.corp.internal' },
        { name: 'api', port: 443, protocol: 'HTTPS', hostname: 'api.corp.internal' },
        { name: 'tls', port: 8443, protocol: 'TLS', hostname: 'db.corp.internal' },
      ],
    });
    const anyListener = observeGateway(REF, gw, [http(route([], [{}]))]);
    expect(anyListener.routeHostnames.map((h) => h.name)).toEqual([
      '*.shop.corp.internal',
      'api.corp.internal',
    ]);
    const bySection = observeGateway(REF, gw, [
      http(route(['www.shop.corp.internal', 'api.corp.internal'], [{ sectionName: 'shop' }])),
    ]);
    expect(bySection.routeHostnames.map((h) => h.name)).toEqual(['www.shop.corp.internal']);
    const tls = observeGateway(REF, gw, [{ kind: 'TLSRoute', route: route([], [{}], 'db') }]);
    expect(tls.routeHostnames).toEqual([{ name: 'db.corp.internal', route: 'TLSRoute shop/db' }]);
  });
});

describe('intersectHostnames (Gateway API host name matching)', () => {
  it.each([
    [[], undefined, []],
    [[], 'a.example.com', ['a.example.com']],
    [['a.example.com', 'b.example.com'], undefined, ['a.example.com', 'b.example.com']],
    [['a.example.com'], 'a.example.com', ['a.example.com']],
    [['a.example.com'], 'b.example.com', []],
    [['a.example.com', 'x.y.example.com'], '*.example.com', ['a.example.com', 'x.y.example.com']],
    [['example.com'], '*.example.com', []],
    [['*.example.com'], 'a.example.com', ['a.example.com']],
    [['*.example.com'], 'example.com', []],
    [['*.a.example.com'], '*.example.com', ['*.a.example.com']],
    [['*.example.com'], '*.a.example.com', ['*.a.example.com']],
    [['*.example.com'], '*.example.com', ['*.example.com']],
    [['*.example.com'], '*.example.org', []],
  ])('route %j on a listener for %s: %j', (route, listener, want) => {
    expect(intersectHostnames(route, listener)).toEqual(want);
  });
});
