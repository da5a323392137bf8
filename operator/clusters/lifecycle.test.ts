import { frozenBy } from './lifecycle.js';

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
