import type { V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';
import { desiredMirror, serviceKindOf, type MirrorTarget } from './desired.js';
import { observeMirrorSource, type MirrorSource } from './observe.js';
import { ownershipOf, serviceContent, sliceContent, takenBy } from './ownership.js';
import { mirrorKeysFor, mirrorServiceOf } from './events.js';

const target: MirrorTarget = {
  gatewayDns: { namespace: 'dev-team', name: 'db' },
  namespace: 'apps',
  name: 'db',
  headless: false,
};

const service = (spec: V1Service['spec'], status?: V1Service['status']): V1Service => ({
  metadata: { name: 'db', namespace: 'apps' },
  spec,
  ...(status ? { status } : {}),
});

const pg = [{ name: 'pg', port: 5432, protocol: 'TCP' }];

describe('observeMirrorSource: what one source cluster contributes, per resolution type', () => {
  const node = (name: string, ip: string, ready = true): V1Node => ({
    metadata: { name },
    status: {
      addresses: [{ type: 'InternalIP', address: ip }],
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    },
  });
  const slice = (
    addressType: string,
    endpoints: NonNullable<V1EndpointSlice['endpoints']>,
  ): V1EndpointSlice => ({
    metadata: { name: `db-${addressType}`, labels: { 'kubernetes.io/service-name': 'db' } },
    addressType,
    endpoints,
    ports: [{ name: 'pg', port: 15432, protocol: 'TCP' }],
  });
  const opts = (
    resolutionType: 'loadBalancer' | 'nodePort' | 'clusterIP' | 'headless',
    clusterReady = true,
  ) => ({
    resolutionType,
    nodeAddressTypes: ['ExternalIP' as const, 'InternalIP' as const],
    clusterReady,
  });

  it.each<[string, ReturnType<typeof opts>, V1Service, V1EndpointSlice[], V1Node[], Partial<MirrorSource>]>([
    [
      'loadBalancer: the ingress IPs on the Service port; host names apart',
      opts('loadBalancer'),
      service(
        { ports: pg },
        { loadBalancer: { ingress: [{ ip: '192.0.2.1' }, { hostname: 'lb.example.com' }] } },
      ),
      [],
      [],
      {
        servicePorts: [{ name: 'pg', port: 5432, protocol: 'TCP', targetPort: 5432 }],
        endpointPorts: pg,
        endpoints: [{ address: '192.0.2.1', family: 'IPv4', ready: true, serving: true, terminating: false }],
        hostnames: ['lb.example.com'],
      },
    ],
    [
      'nodePort: ready nodes on the node port, which is also the target port',
      opts('nodePort'),
      service({ type: 'NodePort', ports: [{ name: 'pg', port: 5432, protocol: 'TCP', nodePort: 30432 }] }),
      [],
      [node('n1', '10.0.0.1'), node('n2', '10.0.0.2', false)],
      {
        servicePorts: [{ name: 'pg', port: 5432, protocol: 'TCP', targetPort: 30432 }],
        endpointPorts: [{ name: 'pg', port: 30432, protocol: 'TCP' }],
        endpoints: [{ address: '10.0.0.1', family: 'IPv4', ready: true, serving: true, terminating: false }],
      },
    ],
    [
      'clusterIP: both cluster IPs of a dual-stack Service, ready while a pod behind them is',
      opts('clusterIP', false),
      service({ clusterIPs: ['10.96.0.10', 'fd00::10'], ports: pg }),
      [],
      [],
      {
        endpoints: [
          { address: '10.96.0.10', family: 'IPv4', ready: false, serving: false, terminating: false },
          { address: 'fd00::10', family: 'IPv6', ready: false, serving: false, terminating: false },
        ],
      },
    ],
    [
      'headless: the pods with host names and their own conditions; the endpoint port as target port',
      opts('headless'),
      service({ clusterIP: 'None', ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }] }),
      [
        slice('IPv4', [
          { addresses: ['10.1.0.1'], hostname: 'db-0', conditions: { ready: true } },
          {
            addresses: ['10.1.0.2'],
            hostname: 'db-1',
            conditions: { ready: false, serving: true, terminating: true },
          },
          { addresses: ['10.1.0.3'] },
        ]),
        slice('IPv6', [{ addresses: ['fd00::1'], hostname: 'db-0', conditions: { ready: true } }]),
        slice('FQDN', [{ addresses: ['x.example.com'] }]),
      ],
      [],
      {
        servicePorts: [{ name: 'pg', port: 5432, protocol: 'TCP', targetPort: 15432 }],
        endpointPorts: [{ name: 'pg', port: 15432, protocol: 'TCP' }],
        endpoints: [
          {
            address: '10.1.0.1',
            family: 'IPv4',
            hostname: 'db-0',
            ready: true,
            serving: true,
            terminating: false,
          },
          {
            address: '10.1.0.2',
            family: 'IPv4',
            hostname: 'db-1',
            ready: false,
            serving: true,
            terminating: true,
          },
          { address: '10.1.0.3', family: 'IPv4', ready: true, serving: true, terminating: false },
          {
            address: 'fd00::1',
            family: 'IPv6',
            hostname: 'db-0',
            ready: true,
            serving: true,
            terminating: false,
          },
        ],
      },
    ],
  ])('%s', (_name, o, svc, slices, nodes, want) => {
    expect(observeMirrorSource('east', svc, slices, nodes, o)).toMatchObject({ cluster: 'east', ...want });
  });

  it('no Service, no share', () => {
    expect(observeMirrorSource('east', undefined, [], [], opts('headless'))).toBeUndefined();
  });
});

describe('desiredMirror', () => {
  const source = (cluster: string, addresses: string[], extra: Partial<MirrorSource> = {}): MirrorSource => ({
    cluster,
    servicePorts: [{ name: 'pg', port: 5432, protocol: 'TCP', targetPort: 5432 }],
    endpointPorts: pg,
    endpoints: addresses.map((address) => ({
      address,
      family: address.includes(':') ? 'IPv6' : 'IPv4',
      ready: true,
      serving: true,
      terminating: false,
    })),
    hostnames: [],
    ...extra,
  });

  it('a selector-less ClusterIP Service and one slice per source cluster, labelled for kube-proxy, CoreDNS and MCS', () => {
    const plan = desiredMirror(target, [
      source('west', ['10.2.0.1']),
      source('east', ['10.1.0.1', '10.1.0.2']),
    ]);
    if (!('desired' in plan)) throw new Error(plan.none);
    expect(plan.desired.kind).toBe('ClusterIP');
    expect(plan.desired.service).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: 'db',
        namespace: 'apps',
        labels: {
          'app.kubernetes.io/managed-by': 'capi-dns-controller',
          'connectivity.tanzu.vmware.com/gatewaydns-namespace': 'dev-team',
          'connectivity.tanzu.vmware.com/gatewaydns-name': 'db',
        },
      },
      spec: { type: 'ClusterIP', ports: [{ name: 'pg', port: 5432, protocol: 'TCP', targetPort: 5432 }] },
    });
    expect(plan.desired.service.spec).not.toHaveProperty('selector');
    expect(plan.desired.slices.map((s) => s.metadata.name)).toEqual(['db.east', 'db.west']);
    expect(plan.desired.slices[0]).toMatchObject({
      metadata: {
        labels: {
          'kubernetes.io/service-name': 'db',
          'endpointslice.kubernetes.io/managed-by': 'capi-dns-controller.connectivity.tanzu.vmware.com',
          'multicluster.kubernetes.io/source-cluster': 'east',
        },
      },
      addressType: 'IPv4',
      endpoints: [
        { addresses: ['10.1.0.1'], conditions: { ready: true, serving: true, terminating: false } },
        { addresses: ['10.1.0.2'], conditions: { ready: true, serving: true, terminating: false } },
      ],
      ports: pg,
    });
  });

  it.each<[string, MirrorTarget, MirrorSource[], unknown]>([
    [
      'headless: clusterIP None',
      { ...target, headless: true },
      [source('east', ['10.1.0.1'])],
      { kind: 'Headless', clusterIP: 'None', slices: ['db.east'] },
    ],
    [
      'dual-stack: a second slice for the IPv6 endpoints of a cluster',
      target,
      [source('east', ['10.1.0.1', 'fd00::1'])],
      { kind: 'ClusterIP', slices: ['db.east', 'db.east.ipv6'] },
    ],
    [
      'host names only: ExternalName to the first, the others named in status',
      target,
      [
        source('east', [], { hostnames: ['b.example.com'] }),
        source('west', [], { hostnames: ['a.example.com'] }),
      ],
      { kind: 'ExternalName', externalName: 'a.example.com', slices: [], notes: 1 },
    ],
    [
      'IPs and host names: the IPs; host names left out and said so',
      target,
      [source('east', [], { hostnames: ['lb.example.com'] }), source('west', ['10.2.0.1'])],
      { kind: 'ClusterIP', slices: ['db.west'], notes: 1 },
    ],
    [
      'a cluster with the Service but no endpoints gets no slice',
      target,
      [source('east', []), source('west', ['10.2.0.1'])],
      { kind: 'ClusterIP', slices: ['db.west'] },
    ],
  ])('%s', (_name, t, sources, want) => {
    const plan = desiredMirror(t, sources);
    if (!('desired' in plan)) throw new Error(plan.none);
    const d = plan.desired;
    expect({
      kind: d.kind,
      ...(d.service.spec.clusterIP ? { clusterIP: d.service.spec.clusterIP } : {}),
      ...(d.service.spec.externalName ? { externalName: d.service.spec.externalName } : {}),
      slices: d.slices.map((s) => s.metadata.name),
      ...(d.notes.length ? { notes: d.notes.length } : {}),
    }).toEqual(want);
  });

  it('ports: the union by name and protocol, the first cluster deciding the number', () => {
    const plan = desiredMirror(target, [
      source('west', ['10.2.0.1'], {
        servicePorts: [
          { name: 'pg', port: 6432, protocol: 'TCP', targetPort: 6432 },
          { name: 'metrics', port: 9187, protocol: 'TCP', targetPort: 9187 },
        ],
      }),
      source('east', ['10.1.0.1']),
    ]);
    if (!('desired' in plan)) throw new Error(plan.none);
    expect(plan.desired.service.spec.ports).toEqual([
      { name: 'metrics', port: 9187, protocol: 'TCP', targetPort: 9187 },
      { name: 'pg', port: 5432, protocol: 'TCP', targetPort: 5432 },
    ]);
  });

  it.each<[string, MirrorTarget, MirrorSource[], RegExp]>([
    ['no source cluster has the Service', target, [], /no selected cluster has the Service/],
    ['a cluster IP needs a port', target, [source('east', ['10.1.0.1'], { servicePorts: [] })], /no ports/],
  ])('none: %s', (_name, t, sources, why) => {
    const plan = desiredMirror(t, sources);
    expect('none' in plan && plan.none).toMatch(why);
  });

  it('a headless mirror needs no port', () => {
    expect(
      'desired' in
        desiredMirror({ ...target, headless: true }, [source('east', ['10.1.0.1'], { servicePorts: [] })]),
    ).toBe(true);
  });
});

describe('ownership and comparison', () => {
  const ours = {
    'app.kubernetes.io/managed-by': 'capi-dns-controller',
    'connectivity.tanzu.vmware.com/gatewaydns-namespace': 'dev-team',
    'connectivity.tanzu.vmware.com/gatewaydns-name': 'db',
  };
  it.each([
    ['ours', ours, { owner: 'ours' }],
    [
      'another GatewayDNS of the namespace',
      { ...ours, 'connectivity.tanzu.vmware.com/gatewaydns-name': 'other' },
      { owner: 'gatewaydns', gatewayDns: 'dev-team/other' },
    ],
    [
      'a look-alike without our gatewaydns labels',
      { 'app.kubernetes.io/managed-by': 'capi-dns-controller' },
      { owner: 'foreign', managers: ['kubectl'] },
    ],
    ['anyone else', {}, { owner: 'foreign', managers: ['kubectl'] }],
  ])('%s', (_name, labels, want) => {
    expect(ownershipOf({ metadata: { labels, managedFields: [{ manager: 'kubectl' }] } }, target)).toEqual(
      want,
    );
  });

  it('says who holds a taken name', () => {
    expect(takenBy('Service', 'apps', 'db', { owner: 'foreign', managers: ['helm'] })).toBe(
      'Service apps/db exists and was not created by capi-dns (managed by helm); it is left alone',
    );
  });

  it('a live Service with the API server defaults compares equal to the manifest; a changed port does not', () => {
    const plan = desiredMirror(target, [
      {
        cluster: 'east',
        servicePorts: [{ name: 'pg', port: 5432, protocol: 'TCP', targetPort: 5432 }],
        endpointPorts: pg,
        endpoints: [{ address: '10.1.0.1', family: 'IPv4', ready: true, serving: true, terminating: false }],
        hostnames: [],
      },
    ]);
    if (!('desired' in plan)) throw new Error(plan.none);
    const keys = Object.keys(plan.desired.service.metadata.labels);
    const live: V1Service = {
      metadata: {
        name: 'db',
        namespace: 'apps',
        labels: { ...plan.desired.service.metadata.labels, extra: 'x' },
        uid: 'u1',
      },
      spec: {
        type: 'ClusterIP',
        clusterIP: '10.96.3.4',
        clusterIPs: ['10.96.3.4'],
        ipFamilies: ['IPv4'],
        sessionAffinity: 'None',
        ports: [{ name: 'pg', port: 5432, protocol: 'TCP', targetPort: 5432 }],
      },
    };
    expect(serviceContent(live, keys)).toBe(serviceContent(plan.desired.service, keys));
    expect(serviceKindOf(live)).toBe('ClusterIP');
    const changed = {
      ...live,
      spec: { ...live.spec, ports: [{ name: 'pg', port: 5433, protocol: 'TCP', targetPort: 5433 }] },
    };
    expect(serviceContent(changed, keys)).not.toBe(serviceContent(plan.desired.service, keys));

    const slice = {
      ...plan.desired.slices[0]!,
      metadata: { ...plan.desired.slices[0]!.metadata, ownerReferences: [{ uid: 'u1' }] },
    };
    const sliceKeys = Object.keys(slice.metadata.labels);
    const liveSlice = {
      ...slice,
      metadata: {
        ...slice.metadata,
        ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'db', uid: 'u1' }],
        resourceVersion: '7',
      },
    };
    expect(sliceContent(liveSlice as V1EndpointSlice, sliceKeys)).toBe(sliceContent(slice, sliceKeys));
    // The Service was created again: the slice's owner must follow.
    const reowned = {
      ...liveSlice,
      metadata: {
        ...liveSlice.metadata,
        ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'db', uid: 'u2' }],
      },
    };
    expect(sliceContent(reowned as V1EndpointSlice, sliceKeys)).not.toBe(sliceContent(slice, sliceKeys));
  });

  it('serviceKindOf tells the kinds that need the Service created again', () => {
    expect(serviceKindOf({ spec: { clusterIP: 'None' } })).toBe('Headless');
    expect(serviceKindOf({ spec: { type: 'ExternalName' } })).toBe('ExternalName');
  });
});

describe('mirrorKeysFor: which GatewayDNS a workload-cluster change concerns', () => {
  const gws = [
    { key: 'dev-team/db', spec: { service: 'apps/db', mirror: {} } },
    { key: 'dev-team/web', spec: { service: 'apps/web', mirror: { namespace: 'shop', name: 'web-global' } } },
    { key: 'dev-team/plain', spec: { service: 'apps/plain' } },
  ];
  const ours = (name: string, ns = 'dev-team') => ({
    'app.kubernetes.io/managed-by': 'capi-dns-controller',
    'connectivity.tanzu.vmware.com/gatewaydns-namespace': ns,
    'connectivity.tanzu.vmware.com/gatewaydns-name': name,
  });
  it.each<[string, string, { name: string; namespace?: string; labels?: Record<string, string> }, string[]]>([
    [
      'drift of a mirror slice',
      'MirrorEndpointSlice',
      { name: 'db.east', namespace: 'apps', labels: ours('db') },
      ['dev-team/db'],
    ],
    [
      "another team's mirror slice: not ours to reconcile",
      'MirrorEndpointSlice',
      { name: 'db.east', namespace: 'apps', labels: ours('db', 'other-team') },
      [],
    ],
    [
      'a Service taking or freeing the name of a mirror',
      'Service',
      { name: 'web-global', namespace: 'shop' },
      ['dev-team/web'],
    ],
    [
      'a Service that is both a source and a mirror name',
      'Service',
      { name: 'db', namespace: 'apps' },
      ['dev-team/db'],
    ],
    ["the mirror's namespace appearing", 'Namespace', { name: 'shop' }, ['dev-team/web']],
    ['anything else', 'Service', { name: 'plain', namespace: 'apps' }, []],
  ])('%s', (_name, kind, metadata, want) => {
    expect(mirrorKeysFor(kind, { metadata }, 'dev-team', gws)).toEqual(want);
  });

  it('mirrorServiceOf fills in the defaults', () => {
    expect(mirrorServiceOf({ service: 'apps/db', mirror: {} })).toBe('apps/db');
    expect(mirrorServiceOf({ service: 'apps/db', mirror: { name: 'db-all' } })).toBe('apps/db-all');
    expect(mirrorServiceOf({ service: 'apps/db' })).toBeUndefined();
  });
});
