import type { ConflictResult } from './desired.js';
import type { ClusterFacts, ClusterState } from './facts.js';
import { pendingStatus, statusFor, type TargetOutcome } from './status.js';

const NOW = new Date('2026-01-01T00:00:00Z');
const LATER = new Date('2026-01-01T00:01:00Z');
const NO_CONFLICT: ConflictResult = { lostDomains: [], with: [] };
const LOST: ConflictResult = { lostDomains: ['gateway.dev-team.clusters.xcc.test'], with: ['older'] };

function f(cluster: string, state: ClusterState, addresses: string[] = []): ClusterFacts {
  return { cluster, state, addresses, ports: [], ...(state === 'Unreachable' ? { error: 'refused' } : {}) };
}

function ok(cluster: string): TargetOutcome {
  return { cluster, result: 'current' };
}

describe('statusFor: the Ready condition names the most useful reason first', () => {
  const cases: {
    name: string;
    facts: ClusterFacts[];
    conflict?: ConflictResult;
    targets?: TargetOutcome[];
    want: [status: string, reason: string];
    message?: RegExp;
  }[] = [
    { name: 'no cluster selected', facts: [], conflict: LOST, want: ['False', 'NoClustersSelected'] },
    {
      name: 'Service nowhere beats a conflict, which the message still names',
      facts: [f('a', 'ServiceNotFound'), f('b', 'ServiceNotFound')],
      conflict: LOST,
      want: ['False', 'ServiceNotFound'],
      message: /none of the selected clusters \(a, b\); names .* claimed by gatewaydns older/,
    },
    {
      name: 'no addresses anywhere beats a conflict',
      facts: [f('a', 'ServiceNotFound'), f('b', 'NoAddresses')],
      conflict: LOST,
      want: ['False', 'NoAddresses'],
      message: /a: ServiceNotFound, b: NoAddresses/,
    },
    {
      name: 'Service nowhere beats a failed withdrawal',
      facts: [f('a', 'ServiceNotFound')],
      targets: [{ cluster: 'b', result: 'failed', error: 'refused' }],
      want: ['False', 'ServiceNotFound'],
    },
    {
      name: 'a conflict with something to publish',
      facts: [f('a', 'Ready', ['10.0.0.1'])],
      conflict: LOST,
      want: ['False', 'Conflict'],
    },
    {
      name: 'an unreachable source with last known addresses',
      facts: [f('a', 'Ready', ['10.0.0.1']), f('b', 'Unreachable', ['10.0.0.2'])],
      want: ['False', 'ClusterUnreachable'],
      message: /b \(source: refused\)/,
    },
    {
      name: 'an unreachable source and the Service missing elsewhere: cannot tell it is nowhere',
      facts: [f('a', 'ServiceNotFound'), f('b', 'Unreachable')],
      want: ['False', 'ClusterUnreachable'],
    },
    {
      name: 'an unreachable target',
      facts: [f('a', 'Ready', ['10.0.0.1'])],
      targets: [ok('a'), { cluster: 'b', result: 'failed', error: 'refused' }],
      want: ['False', 'ClusterUnreachable'],
      message: /b \(target: refused\)/,
    },
    {
      name: 'ready where the Service is, with the others named',
      facts: [f('a', 'Ready', ['10.0.0.1']), f('b', 'ServiceNotFound')],
      targets: [ok('a'), ok('b')],
      want: ['True', 'Ready'],
      message: /published to 2 workload cluster\(s\); not published: b: ServiceNotFound/,
    },
  ];

  it.each(cases)('$name', ({ facts, conflict, targets, want, message }) => {
    const status = statusFor({
      generation: 3,
      previous: undefined,
      facts,
      conflict: conflict ?? NO_CONFLICT,
      targets: targets ?? facts.map((x) => ok(x.cluster)),
      now: NOW,
    });
    const ready = status.conditions?.find((c) => c.type === 'Ready');
    expect([ready?.status, ready?.reason]).toEqual(want);
    expect(ready?.observedGeneration).toBe(3);
    expect(status.observedGeneration).toBe(3);
    if (message) expect(ready?.message).toMatch(message);
  });
});

describe('pendingStatus', () => {
  it('starts Ready as Unknown/Pending, for the generation it waits on, without claiming to have observed it', () => {
    const status = pendingStatus(1, NOW);
    expect(status.conditions).toEqual([
      {
        type: 'Ready',
        status: 'Unknown',
        reason: 'Pending',
        message: 'reading the selected clusters',
        observedGeneration: 1,
        lastTransitionTime: NOW.toISOString(),
      },
    ]);
    expect(status.observedGeneration).toBeUndefined();
  });

  it('moves lastTransitionTime when Pending flips to a result, and only then', () => {
    const facts = [f('a', 'Ready', ['10.0.0.1'])];
    const input = { generation: 1, facts, conflict: NO_CONFLICT, targets: [ok('a')] };
    const first = statusFor({ ...input, previous: pendingStatus(1, NOW), now: LATER });
    expect(first.conditions?.[0]?.lastTransitionTime).toBe(LATER.toISOString());
    const again = statusFor({ ...input, previous: first, now: new Date('2026-01-02T00:00:00Z') });
    expect(again).toEqual(first);
  });
});
