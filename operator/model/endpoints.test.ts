import type { V1EndpointSlice, V1Endpoint } from '@kubernetes/client-node';
import { observeEndpoints, observeHeadlessService, slicesOf, withEndpointHealth } from './endpoints.js';

/** A slice as the EndpointSlice controller writes it. */
function slice(
  name: string,
  addressType: 'IPv4' | 'IPv6' | 'FQDN',
  endpoints: V1Endpoint[],
  ports: { name?: string; port: number; protocol?: string }[] = [{ name: 'pg', port: 5432, protocol: 'TCP' }],
  service = 'db',
): V1EndpointSlice {
  return {
    metadata: {
      name,
      namespace: 'apps',
      labels: {
        'kubernetes.io/service-name': service,
        'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
      },
    },
    addressType,
    endpoints,
    ports,
  };
}

function pod(
  name: string,
  addresses: string[],
  conditions: V1Endpoint['conditions'] = { ready: true, serving: true, terminating: false },
  hostname?: string,
): V1Endpoint {
  return {
    addresses,
    conditions,
    ...(hostname ? { hostname } : {}),
    targetRef: { kind: 'Pod', namespace: 'apps', name },
  };
}

describe('observeEndpoints', () => {
  const pg = [{ name: 'pg', protocol: 'TCP', port: 5432 }];
  it.each([
    [
      'ready and not-ready endpoints',
      [
        slice('s1', 'IPv4', [
          pod('a', ['10.1.0.1']),
          pod('b', ['10.1.0.2'], { ready: false, serving: false }),
        ]),
      ],
      [{ addresses: ['10.1.0.1'], ports: pg }],
      [1, 2],
    ],
    [
      'serving but terminating is left out, also when marked ready (publishNotReadyAddresses)',
      [
        slice('s1', 'IPv4', [
          pod('a', ['10.1.0.1'], { ready: false, serving: true, terminating: true }),
          pod('b', ['10.1.0.2'], { ready: true, serving: true, terminating: true }),
        ]),
      ],
      [],
      [0, 2],
    ],
    [
      'unset ready counts as ready (the API says: unknown, interpret as ready)',
      [slice('s1', 'IPv4', [pod('a', ['10.1.0.1'], {})])],
      [{ addresses: ['10.1.0.1'], ports: pg }],
      [1, 1],
    ],
    [
      'a dual-stack pod in an IPv4 and an IPv6 slice is one endpoint with both addresses',
      [
        slice('s4', 'IPv4', [pod('web-0', ['10.1.0.1'], undefined, 'web-0')]),
        slice('s6', 'IPv6', [pod('web-0', ['fd00::1'], undefined, 'web-0')]),
      ],
      [{ hostname: 'web-0', addresses: ['10.1.0.1', 'fd00::1'], ports: pg }],
      [1, 1],
    ],
    [
      'the same endpoint in two slices (mid-rewrite) is counted once',
      [slice('s1', 'IPv4', [pod('a', ['10.1.0.1'])]), slice('s2', 'IPv4', [pod('a', ['10.1.0.1'])])],
      [{ addresses: ['10.1.0.1'], ports: pg }],
      [1, 1],
    ],
    [
      'FQDN slices carry nothing to publish',
      [slice('s1', 'FQDN', [pod('a', ['db.example.com'])])],
      [],
      [0, 0],
    ],
    [
      'unnamed ports get no SRV; host names that are not DNS labels are ignored',
      [slice('s1', 'IPv4', [pod('a', ['10.1.0.1'], undefined, 'Not_A_Label')], [{ port: 80 }])],
      [{ addresses: ['10.1.0.1'], ports: [] }],
      [1, 1],
    ],
  ] as const)('%s', (_what, slices, ready, [readyCount, totalCount]) => {
    const { unreadyHostnames: _, ...seen } = observeEndpoints(slices as unknown as V1EndpointSlice[]);
    expect(seen).toEqual({ ready, readyCount, totalCount });
  });

  it('names the host names of pods that are not ready, unless a ready endpoint has the same one', () => {
    const seen = observeEndpoints([
      slice('s1', 'IPv4', [
        pod('web-0', ['10.1.0.1'], { ready: true }, 'web-0'),
        pod('web-1', ['10.1.0.2'], { ready: false }, 'web-1'),
        pod('web-2', ['10.1.0.3'], { ready: true, terminating: true }, 'web-2'),
        pod('web-0-old', ['10.1.0.9'], { ready: false, terminating: true }, 'web-0'),
      ]),
    ]);
    expect(seen.unreadyHostnames).toEqual(['web-1', 'web-2']);
  });

  it('slicesOf picks the slices of one Service by its label', () => {
    const all = [slice('a', 'IPv4', [], [], 'db'), slice('b', 'IPv4', [], [], 'web')];
    expect(slicesOf(all, 'web').map((s) => s.metadata?.name)).toEqual(['b']);
  });
});

describe('observeHeadlessService', () => {
  it.each([
    ['no Service', undefined, [], 'ServiceNotFound', /^$/],
    ['no slices', {}, [], 'NoAddresses', /no endpoints/],
    [
      'no ready endpoint',
      {},
      [slice('s', 'IPv4', [pod('a', ['10.1.0.1'], { ready: false })])],
      'NoAddresses',
      /none of the 1 endpoints is ready/,
    ],
    ['ready', {}, [slice('s', 'IPv4', [pod('a', ['10.1.0.1'])])], 'Ready', /^$/],
  ] as const)('%s', (_what, service, slices, state, message) => {
    const seen = observeHeadlessService(service, slices);
    expect(seen.state).toBe(state);
    expect(seen.message ?? '').toMatch(message);
  });
});

describe('withEndpointHealth (clusterIP)', () => {
  const ready = { state: 'Ready', addresses: ['10.96.0.10'], ports: [] } as const;
  it.each([
    [
      'a ready pod keeps the cluster IP',
      [slice('s', 'IPv4', [pod('a', ['10.1.0.1'])])],
      'Ready',
      ['10.96.0.10'],
      [1, 1],
    ],
    [
      'no ready pod withdraws it',
      [slice('s', 'IPv4', [pod('a', ['10.1.0.1'], { ready: false })])],
      'NoAddresses',
      [],
      [0, 1],
    ],
    ['no endpoints at all withdraws it', [], 'NoAddresses', [], [0, 0]],
  ] as const)('%s', (_what, slices, state, addresses, [readyEndpoints, totalEndpoints]) => {
    const seen = withEndpointHealth({ ...ready, addresses: [...ready.addresses], ports: [] }, slices);
    expect([seen.state, seen.addresses, seen.readyEndpoints, seen.totalEndpoints]).toEqual([
      state,
      addresses,
      readyEndpoints,
      totalEndpoints,
    ]);
  });

  it('leaves a cluster that is not Ready for other reasons alone', () => {
    const headless = { state: 'HeadlessService', addresses: [], ports: [] } as const;
    expect(withEndpointHealth({ ...headless, addresses: [], ports: [] }, [])).toEqual(headless);
  });
});
