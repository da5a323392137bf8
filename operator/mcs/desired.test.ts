import { describe, expect, it } from '@jest/globals';
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { planForMembers, planService } from './desired.js';
import { observeExport, type ExportObservation } from './observe.js';
import { derivedServiceName, sliceObjects } from './objects.js';

const hello = (over: Partial<V1Service['spec']> = {}): V1Service => ({
  metadata: { name: 'hello', namespace: 'team' },
  spec: {
    clusterIP: '10.0.0.1',
    ports: [
      { name: 'tcp', port: 42, protocol: 'TCP' },
      { name: 'udp', port: 42, protocol: 'UDP' },
    ],
    sessionAffinity: 'ClientIP',
    sessionAffinityConfig: { clientIP: { timeoutSeconds: 10 } },
    ipFamilies: ['IPv4'],
    ...over,
  },
});

const slice = (
  name: string,
  addresses: string[][],
  extra: Partial<V1EndpointSlice> = {},
): V1EndpointSlice => ({
  metadata: {
    name: `${name}-x`,
    namespace: 'team',
    labels: {
      'kubernetes.io/service-name': name,
      'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
    },
  },
  addressType: 'IPv4',
  ports: [{ name: 'tcp', port: 8080, protocol: 'TCP' }],
  endpoints: addresses.map((a, i) => ({
    addresses: a,
    conditions: { ready: i % 2 === 0 },
    hostname: `web-${i}`,
  })),
  ...extra,
});

const exportOf = (
  cluster: string,
  created: string,
  service: V1Service | undefined,
  spec: { exportedLabels?: Record<string, string> } = {},
  slices: V1EndpointSlice[] = [],
): ExportObservation =>
  observeExport(
    cluster,
    { metadata: { uid: `u-${cluster}`, creationTimestamp: created }, spec },
    service,
    slices,
  );

const conditionOf = (plan: ReturnType<typeof planService>, cluster: string, type: string) =>
  plan.conditions.get(cluster)?.find((c) => c.type === type);

describe('planService (KEP-1645 rules)', () => {
  it('imports a ClusterIP Service as ClusterSetIP with its properties and ready endpoints only', () => {
    const plan = planService('team', 'hello', [
      exportOf('a', '2026-01-01T00:00:00Z', hello(), { exportedLabels: { tier: 'web' } }, [
        slice('hello', [['10.1.0.1'], ['10.1.0.2'], ['10.1.0.3']]),
      ]),
    ]);
    expect(plan.import?.spec).toEqual({
      type: 'ClusterSetIP',
      ports: [
        { name: 'tcp', port: 42, protocol: 'TCP' },
        { name: 'udp', port: 42, protocol: 'UDP' },
      ],
      sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 10 } },
      ipFamilies: ['IPv4'],
    });
    expect(plan.import?.labels).toEqual({ tier: 'web' });
    expect(plan.import?.endpoints[0]?.groups[0]?.endpoints.map((e) => e.addresses[0])).toEqual([
      '10.1.0.1',
      '10.1.0.3',
    ]);
    expect(conditionOf(plan, 'a', 'Valid')).toMatchObject({ status: 'True', reason: 'Valid' });
    expect(conditionOf(plan, 'a', 'Conflict')).toMatchObject({ status: 'False', reason: 'NoConflicts' });
  });

  it('a headless Service is a Headless import', () => {
    const plan = planService('team', 'hello', [
      exportOf('a', '2026-01-01T00:00:00Z', hello({ clusterIP: 'None' })),
    ]);
    expect(plan.import?.spec.type).toBe('Headless');
  });

  it('no Service: Valid=False NoService; ExternalName: Valid=False InvalidServiceType; neither imports', () => {
    const plan = planService('team', 'hello', [
      exportOf('a', '2026-01-01T00:00:00Z', undefined),
      exportOf('b', '2026-01-01T00:00:00Z', hello({ type: 'ExternalName', externalName: 'example.com' })),
    ]);
    expect(plan.import).toBeUndefined();
    expect(conditionOf(plan, 'a', 'Valid')).toMatchObject({ status: 'False', reason: 'NoService' });
    expect(conditionOf(plan, 'b', 'Valid')).toMatchObject({ status: 'False', reason: 'InvalidServiceType' });
  });

  it('ports: the union by name, the oldest export winning a name, and a PortConflict on every export', () => {
    const older = exportOf(
      'b',
      '2026-01-01T00:00:00Z',
      hello({ ports: [{ name: 'tcp', port: 42, protocol: 'TCP' }] }),
    );
    const newer = exportOf(
      'a',
      '2026-01-01T00:00:05Z',
      hello({
        ports: [
          { name: 'tcp', port: 43, protocol: 'TCP' },
          { name: 'stcp', port: 142, protocol: 'SCTP' },
        ],
      }),
    );
    const plan = planService('team', 'hello', [newer, older]);
    expect(plan.import?.spec.ports).toEqual([
      { name: 'stcp', port: 142, protocol: 'SCTP' },
      { name: 'tcp', port: 42, protocol: 'TCP' },
    ]);
    for (const c of ['a', 'b'])
      expect(conditionOf(plan, c, 'Conflict')).toMatchObject({ status: 'True', reason: 'PortConflict' });
  });

  it("a newer export's endpoints do not serve a port it defines differently (same name, other number)", () => {
    const older = exportOf(
      'a',
      '2026-01-01T00:00:00Z',
      hello({ ports: [{ name: 'tcp', port: 42, protocol: 'TCP' }] }),
      {},
      [slice('hello', [['10.1.0.1']])],
    );
    const conflicting = slice('hello', [['10.2.0.1']]);
    conflicting.ports = [{ name: 'tcp', port: 42, protocol: 'TCP' }];
    const extra = slice('hello', [['10.2.0.2']]);
    extra.ports = [{ name: 'tcp2', port: 42, protocol: 'TCP' }];
    const newer = exportOf(
      'b',
      '2026-01-01T00:00:05Z',
      hello({
        ports: [
          { name: 'tcp', port: 4242, protocol: 'TCP' },
          { name: 'tcp2', port: 4343, protocol: 'TCP' },
        ],
      }),
      {},
      [conflicting, extra],
    );
    const plan = planService('team', 'hello', [older, newer]);
    const b = plan.import?.endpoints.find((e) => e.cluster === 'b');
    // Only its own port tcp2 (4343), which no older export defines otherwise.
    expect(
      b?.groups.map((g) => [g.ports.map((p) => p.name), g.endpoints.map((e) => e.addresses[0])]),
    ).toEqual([[['tcp2'], ['10.2.0.2']]]);
    expect(
      plan.import?.endpoints.find((e) => e.cluster === 'a')?.groups[0]?.ports.map((p) => p.name),
    ).toEqual(['tcp']);
  });

  it('headlessness, labels: the oldest wins; the first conflict is the reason, all are in the message', () => {
    const plan = planService('team', 'hello', [
      exportOf('a', '2026-01-01T00:00:00Z', hello(), { exportedLabels: { x: '1' } }),
      exportOf('b', '2026-01-01T00:00:09Z', hello({ clusterIP: 'None' }), { exportedLabels: { y: '1' } }),
    ]);
    expect(plan.import?.spec.type).toBe('ClusterSetIP');
    expect(plan.import?.labels).toEqual({ x: '1' });
    const conflict = conditionOf(plan, 'b', 'Conflict');
    expect(conflict).toMatchObject({ status: 'True', reason: 'TypeConflict' });
    expect(conflict?.message).toContain('exportedLabels');
  });

  it('exports of the same second: the cluster name decides, whatever the order given', () => {
    const a = exportOf('a', '2026-01-01T00:00:00Z', hello(), { exportedLabels: { from: 'a' } });
    const b = exportOf('b', '2026-01-01T00:00:00Z', hello(), { exportedLabels: { from: 'b' } });
    expect(planService('team', 'hello', [b, a]).import?.labels).toEqual({ from: 'a' });
    expect(planService('team', 'hello', [a, b]).import?.labels).toEqual({ from: 'a' });
  });

  it("never feeds on MCS slices (ours or another controller's)", () => {
    const ours = slice('hello', [['10.9.9.9']]);
    ours.metadata!.labels!['multicluster.kubernetes.io/service-name'] = 'hello';
    const mirror = slice('hello', [['10.8.8.8']]);
    mirror.metadata!.labels!['endpointslice.kubernetes.io/managed-by'] = 'someone-else';
    const plan = planService('team', 'hello', [
      exportOf('a', '2026-01-01T00:00:00Z', hello(), {}, [ours, mirror]),
    ]);
    expect(plan.import?.endpoints[0]?.groups).toEqual([]);
  });
});

describe('sliceObjects', () => {
  it("marks the last-seen endpoints of a cluster that does not answer, and only that cluster's", () => {
    const a = {
      ...exportOf('a', '2026-01-01T00:00:00Z', hello(), {}, [slice('hello', [['10.1.0.1']])]),
      unreachableSince: '2026-11-25T07:00:00.000Z',
    };
    const b = exportOf('b', '2026-01-01T00:00:01Z', hello(), {}, [slice('hello', [['10.2.0.1']])]);
    const slices = sliceObjects('team', 'hello', planService('team', 'hello', [a, b]).import!);
    const mark = (cluster: string) =>
      slices.find((x) => x.metadata?.labels?.['multicluster.kubernetes.io/source-cluster'] === cluster)
        ?.metadata?.annotations?.['connectivity.tanzu.vmware.com/source-unreachable-since'];
    expect(mark('a')).toBe('2026-11-25T07:00:00.000Z');
    expect(mark('b')).toBeUndefined();
  });

  it('one slice per exporting cluster, labelled for MCS and, for a ClusterSetIP, for kube-proxy; at most 100 endpoints', () => {
    const many = Array.from({ length: 250 }, (_, i) => [`10.2.${Math.floor(i / 200)}.${i % 200}`]).map(
      (a) => a,
    );
    const readyOnly = slice('hello', many);
    readyOnly.endpoints = (readyOnly.endpoints ?? []).map((e) => ({ ...e, conditions: { ready: true } }));
    const plan = planService('team', 'hello', [
      exportOf('a', '2026-01-01T00:00:00Z', hello(), {}, [readyOnly]),
    ]);
    const slices = sliceObjects('team', 'hello', plan.import!);
    expect(slices.map((s) => s.endpoints?.length)).toEqual([100, 100, 50]);
    expect(new Set(slices.map((s) => s.metadata?.name)).size).toBe(3);
    expect(slices[0]?.metadata?.labels).toMatchObject({
      'multicluster.kubernetes.io/service-name': 'hello',
      'multicluster.kubernetes.io/source-cluster': 'a',
      'kubernetes.io/service-name': derivedServiceName('hello'),
    });
    expect(slices[0]?.metadata?.labels?.['endpointslice.kubernetes.io/managed-by']).not.toBe(
      'endpointslice-controller.k8s.io',
    );
  });
});

describe('planForMembers (the export-to annotation)', () => {
  const to = (cluster: string, created: string, selector: string, service = hello()): ExportObservation =>
    observeExport(
      cluster,
      {
        metadata: {
          uid: `u-${cluster}`,
          creationTimestamp: created,
          annotations: { 'connectivity.tanzu.vmware.com/export-to': selector },
        },
        spec: {},
      },
      service,
      [],
    );
  const members: { name: string; labels: Record<string, string> }[] = [
    { name: 'a', labels: { region: 'eu' } },
    { name: 'b', labels: { region: 'us' } },
    { name: 'c', labels: { region: 'eu', env: 'prod' } },
  ];

  it('imports into the members the export names only; without the annotation, into every member', () => {
    const only = planForMembers('team', 'hello', [to('b', '2026-01-01T00:00:00Z', 'region=eu')], members);
    expect([...only.importOf].map(([m, i]) => [m, i?.clusters])).toEqual([
      ['a', ['b']],
      ['b', undefined],
      ['c', ['b']],
    ]);
    const all = planForMembers('team', 'hello', [exportOf('b', '2026-01-01T00:00:00Z', hello())], members);
    expect([...all.importOf.values()].every((i) => i?.clusters.join() === 'b')).toBe(true);
  });

  it("the KEP's rules hold among the exports that reach a member: a conflict only where both reach", () => {
    const older = to('a', '2026-01-01T00:00:00Z', 'env=prod');
    const newer = to('b', '2026-02-01T00:00:00Z', 'region=us', hello({ ports: [{ name: 'tcp', port: 43 }] }));
    const plan = planForMembers('team', 'hello', [older, newer], members);
    expect(plan.importOf.get('a')).toBeUndefined();
    expect(plan.importOf.get('b')?.spec.ports.map((p) => p.port)).toEqual([43]);
    expect(plan.importOf.get('c')?.spec.ports.map((p) => p.port)).toEqual([42, 42]);
    // They never reach the same member: no conflict, whatever their ports.
    expect(plan.conditions.get('b')?.find((c) => c.type === 'Conflict')?.status).toBe('False');
    const both = planForMembers(
      'team',
      'hello',
      [
        older,
        to(
          'b',
          '2026-02-01T00:00:00Z',
          'env',
          newer.service && hello({ ports: [{ name: 'tcp', port: 43 }] }),
        ),
      ],
      members,
    );
    expect(both.conditions.get('b')?.find((c) => c.type === 'Conflict')).toMatchObject({
      status: 'True',
      reason: 'PortConflict',
    });
  });

  it('a malformed annotation: Valid=False InvalidExportTo saying what is wrong, exported nowhere', () => {
    const plan = planForMembers('team', 'hello', [to('a', '2026-01-01T00:00:00Z', 'region in (eu')], members);
    expect([...plan.importOf.values()].every((i) => i === undefined)).toBe(true);
    expect(plan.reaches.get('a')).toEqual([]);
    expect(plan.conditions.get('a')).toEqual([
      {
        type: 'Valid',
        status: 'False',
        reason: 'InvalidExportTo',
        message:
          'annotation connectivity.tanzu.vmware.com/export-to: unbalanced "(" in "region in (eu"; not exported',
      },
    ]);
  });

  it('status.clusters (KEP PR #6329): the members each export reaches, in step with export-to and membership', () => {
    const eu = to('b', '2026-01-01T00:00:00Z', 'region=eu');
    const plain = exportOf('a', '2026-01-01T00:00:00Z', hello());
    const plan = planForMembers('team', 'hello', [plain, eu], members);
    expect(Object.fromEntries(plan.reaches)).toEqual({ a: ['a', 'b', 'c'], b: ['a', 'c'] });
    // c leaves the ClusterSet (or its label changes): it is reached no more.
    const fewer = planForMembers('team', 'hello', [plain, eu], members.slice(0, 2));
    expect(Object.fromEntries(fewer.reaches)).toEqual({ a: ['a', 'b'], b: ['a'] });
    // An invalid export (no Service) reaches nobody.
    const invalid = planForMembers(
      'team',
      'hello',
      [exportOf('a', '2026-01-01T00:00:00Z', undefined)],
      members,
    );
    expect(invalid.reaches.get('a')).toEqual([]);
  });
});
