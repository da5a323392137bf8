import type { ImportDesired } from './desired.js';
import { serviceImportStatus } from './objects.js';

const desired = (unreachableSince?: string): ImportDesired => ({
  spec: { type: 'ClusterSetIP', ports: [] },
  labels: {},
  annotations: {},
  clusters: ['east', 'west'],
  endpoints: [
    { cluster: 'east', groups: [] },
    { cluster: 'west', groups: [], ...(unreachableSince ? { unreachableSince } : {}) },
  ],
});
const t0 = new Date('2026-11-26T10:00:00Z');
const t1 = new Date('2026-11-26T10:05:00Z');

describe('ServiceImport status', () => {
  it('lists the exporting clusters and says whether each answers; unchanged, it is not written again', () => {
    const first = serviceImportStatus(desired(), undefined, 1, t0);
    expect(first).toEqual({
      clusters: [{ cluster: 'east' }, { cluster: 'west' }],
      conditions: [
        {
          type: 'SourcesReachable',
          status: 'True',
          reason: 'AllReachable',
          message: 'every exporting cluster answers (2)',
          observedGeneration: 1,
          lastTransitionTime: t0.toISOString(),
        },
      ],
    });
    expect(serviceImportStatus(desired(), first, 1, t1)).toBeUndefined();
  });

  it('names an exporter that does not answer and since when, and clears it when it answers again', () => {
    const before = serviceImportStatus(desired(), undefined, 1, t0);
    const cut = serviceImportStatus(desired('2026-11-26T10:04:00Z'), before, 1, t1);
    expect(cut?.conditions?.[0]).toMatchObject({
      status: 'False',
      reason: 'SourceUnreachable',
      message: 'west unreachable since 2026-11-26T10:04:00Z: its last known endpoints are kept',
      lastTransitionTime: t1.toISOString(),
    });
    expect(serviceImportStatus(desired(), cut, 1, t1)?.conditions?.[0]).toMatchObject({
      status: 'True',
      reason: 'AllReachable',
    });
  });
});
