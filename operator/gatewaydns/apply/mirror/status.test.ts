import { validateGatewayDnsSpec } from '../../../model/validate.js';
import { withMirrorStatus, type MirrorResult } from './status.js';
import type { MirrorOutcome } from './writer.js';

const now = new Date('2026-11-23T12:00:00Z');
const outcome = (cluster: string, state: MirrorOutcome['state'], message?: string): MirrorOutcome => ({
  cluster,
  service: 'apps/db',
  state,
  writes: 0,
  ...(message ? { message } : {}),
  ...(state === 'InPlace' ? { endpointSlices: 2 } : {}),
});
const result = (outcomes: MirrorOutcome[], unreachableSources: string[] = []): MirrorResult => ({
  service: 'apps/db',
  outcomes,
  unreachableSources,
});
const mirrored = (r: MirrorResult) =>
  withMirrorStatus({ conditions: [] }, undefined, r, 3, now).conditions?.find((c) => c.type === 'Mirrored');

describe('withMirrorStatus', () => {
  it.each<[string, MirrorResult, string, string, RegExp]>([
    [
      'in place wherever the namespace exists',
      result([
        outcome('edge', 'InPlace'),
        outcome('east', 'SourceCluster'),
        outcome('other', 'NamespaceNotFound'),
      ]),
      'True',
      'InPlace',
      /mirror apps\/db in place in edge; not consumers: east: SourceCluster, other: NamespaceNotFound/,
    ],
    [
      'a name taken in one cluster',
      result([
        outcome('edge', 'Conflict', 'Service apps/db exists and was not created by capi-dns'),
        outcome('west', 'InPlace'),
      ]),
      'False',
      'Conflict',
      /edge: Service apps\/db exists/,
    ],
    [
      'a source cluster away: its last known endpoints stay',
      result([outcome('edge', 'InPlace')], ['east']),
      'False',
      'ClusterUnreachable',
      /east \(source: last known endpoints kept\); mirror apps\/db in place in 1 cluster/,
    ],
    [
      'a consuming cluster away',
      result([outcome('edge', 'Unreachable', 'connect ECONNREFUSED')]),
      'False',
      'ClusterUnreachable',
      /edge \(consumer: connect ECONNREFUSED\)/,
    ],
    [
      'no source anywhere',
      result([outcome('edge', 'NoSource', 'no selected cluster has the Service')]),
      'False',
      'NoSource',
      /no selected cluster has the Service/,
    ],
    [
      'nobody has the namespace',
      result([outcome('edge', 'NamespaceNotFound', 'no namespace apps: not a consumer')]),
      'False',
      'NoConsumers',
      /no workload cluster consumes mirror apps\/db/,
    ],
    [
      'a refused write',
      result([outcome('edge', 'Failed', 'forbidden')]),
      'False',
      'Failed',
      /edge: forbidden/,
    ],
  ])('%s', (_name, r, status, reason, message) => {
    expect(mirrored(r)).toMatchObject({ status, reason, observedGeneration: 3 });
    expect(mirrored(r)?.message).toMatch(message);
  });

  it('lists every cluster, sorted, and is stable for the same input (no status rewrite)', () => {
    const r = result([outcome('west', 'InPlace'), outcome('edge', 'Conflict', 'taken')]);
    const first = withMirrorStatus({ conditions: [] }, undefined, r, 1, now);
    expect(first.mirrors).toEqual([
      { cluster: 'edge', state: 'Conflict', service: 'apps/db', message: 'taken' },
      { cluster: 'west', state: 'InPlace', service: 'apps/db', endpointSlices: 2 },
    ]);
    const later = withMirrorStatus(
      { conditions: first.conditions },
      first,
      r,
      1,
      new Date('2026-11-24T00:00:00Z'),
    );
    expect(later).toEqual(first);
  });

  it('without spec.mirror: no condition, and an empty list where one was', () => {
    const before = withMirrorStatus(
      { conditions: [] },
      undefined,
      result([outcome('edge', 'InPlace')]),
      1,
      now,
    );
    const after = withMirrorStatus({ conditions: before.conditions }, before, undefined, 2, now);
    expect(after.conditions?.map((c) => c.type)).toEqual([]);
    expect(after.mirrors).toEqual([]);
    expect(withMirrorStatus({ conditions: [] }, { conditions: [] }, undefined, 2, now)).not.toHaveProperty(
      'mirrors',
    );
  });
});

describe('spec.mirror validation', () => {
  const base = { clusterSelector: {}, service: 'apps/db' };
  it('defaults to the source Service namespace and name', () => {
    const v = validateGatewayDnsSpec({ ...base, mirror: {} });
    expect(v.valid && v.spec.mirror).toEqual({ namespace: 'apps', name: 'db' });
    const w = validateGatewayDnsSpec({ ...base, mirror: { namespace: 'shop', name: 'db-all' } });
    expect(w.valid && w.spec.mirror).toEqual({ namespace: 'shop', name: 'db-all' });
    const none = validateGatewayDnsSpec(base);
    expect(none.valid && none.spec.mirror).toBeUndefined();
  });

  it.each([
    [
      { name: '1db' },
      'spec.mirror.name must be a Service name: lower-case letters, digits and "-", starting with a letter',
    ],
    [{ namespace: 'Apps' }, 'spec.mirror.namespace must be a namespace name'],
    [{ service: 'db' }, 'spec.mirror has no field "service" (only namespace and name)'],
    [{ name: 'x'.repeat(64) }, 'spec.mirror.name must NOT have more than 63 characters'],
  ])('rejects mirror %j with a clear message', (mirror, message) => {
    const v = validateGatewayDnsSpec({ ...base, mirror });
    expect(v.valid).toBe(false);
    expect(!v.valid && v.message).toContain(message);
  });
});
