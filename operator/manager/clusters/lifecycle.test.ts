import {
  clusterFingerprint,
  frozenBy,
  frozenOrProvisioning,
  notConnectableYet,
  type ClusterObject,
} from './lifecycle.js';

describe('frozenBy: the Cluster API contract on paused and deleting Clusters', () => {
  it.each<[string, Parameters<typeof frozenBy>[0], string | undefined]>([
    ['an ordinary Cluster', { metadata: {} }, undefined],
    ['spec.paused: true', { metadata: {}, spec: { paused: true } }, 'Paused'],
    ['spec.paused: false', { metadata: {}, spec: { paused: false } }, undefined],
    [
      'the paused annotation, any value',
      { metadata: { annotations: { 'cluster.x-k8s.io/paused': '' } } },
      'Paused',
    ],
    ['another annotation', { metadata: { annotations: { 'cluster.x-k8s.io/other': 'true' } } }, undefined],
    ['being deleted', { metadata: { deletionTimestamp: '2026-11-24T00:00:00Z' } }, 'Deleting'],
    [
      'paused and being deleted (clusterctl move deletes a paused source)',
      { metadata: { deletionTimestamp: '2026-11-24T00:00:00Z' }, spec: { paused: true } },
      'Paused',
    ],
  ])('%s', (_name, cluster, want) => expect(frozenBy(cluster)).toBe(want));
});

describe('notConnectableYet: connect only once Cluster API reports the Cluster up', () => {
  const cp = { controlPlaneRef: { kind: 'KubeadmControlPlane', name: 'c' } };
  it.each<[string, Parameters<typeof notConnectableYet>[0], RegExp | undefined]>([
    [
      'not reconciled by Cluster API yet (no status)',
      { metadata: {} },
      /infrastructure is not provisioned \(Cluster API has not reported it yet\)/,
    ],
    [
      'infrastructure not provisioned, with the condition',
      {
        metadata: {},
        status: {
          conditions: [
            { type: 'InfrastructureReady', status: 'False', reason: 'NotReady', message: 'waiting' },
          ],
        },
      },
      /InfrastructureReady=False, reason NotReady: waiting/,
    ],
    [
      'provisioned, with a control plane provider that has not initialized it',
      { metadata: {}, spec: cp, status: { initialization: { infrastructureProvisioned: true } } },
      /control plane is not initialized/,
    ],
    [
      'provisioned and initialized',
      {
        metadata: {},
        spec: cp,
        status: { initialization: { infrastructureProvisioned: true, controlPlaneInitialized: true } },
      },
      undefined,
    ],
    [
      'provisioned, no control plane provider (machines, or a cluster registered by hand)',
      { metadata: {}, status: { initialization: { infrastructureProvisioned: true } } },
      undefined,
    ],
  ])('%s', (_name, cluster, want) => {
    const got = notConnectableYet(cluster);
    if (want) expect(got).toMatch(want);
    else expect(got).toBeUndefined();
    expect(frozenOrProvisioning(cluster)).toBe(want ? 'Provisioning' : undefined);
  });

  it('paused or deleting wins over provisioning', () => {
    expect(frozenOrProvisioning({ metadata: {}, spec: { paused: true } })).toBe('Paused');
  });
});

describe('clusterFingerprint: only what the operator acts on', () => {
  const base: ClusterObject = {
    metadata: { name: 'c', uid: 'u1', labels: { a: 'b' } },
    status: {
      initialization: { infrastructureProvisioned: true, controlPlaneInitialized: true },
      conditions: [{ type: 'Available', status: 'True' }],
    },
  };
  it('ignores conditions Cluster API rewrites', () => {
    const probed = {
      ...base,
      status: { ...base.status, conditions: [{ type: 'Available', status: 'False' }] },
    };
    expect(clusterFingerprint(probed)).toBe(clusterFingerprint(base));
  });
  it.each<[string, ClusterObject]>([
    ['a label', { ...base, metadata: { ...base.metadata, labels: { a: 'c' } } }],
    [
      'an annotation (the Corefile opt-out)',
      {
        ...base,
        metadata: { ...base.metadata, annotations: { 'connectivity.tanzu.vmware.com/coredns': 'unmanaged' } },
      },
    ],
    ['paused', { ...base, spec: { paused: true } }],
    ['deleting', { ...base, metadata: { ...base.metadata, deletionTimestamp: '2026-11-25T00:00:00Z' } }],
    ['not initialized', { ...base, status: {} }],
    ['recreated (another uid)', { ...base, metadata: { ...base.metadata, uid: 'u2' } }],
  ])('changes with %s', (_name, changed) =>
    expect(clusterFingerprint(changed)).not.toBe(clusterFingerprint(base)),
  );
});
