import type { ConflictResult } from '../claims/conflicts.js';
import type { ClusterFacts, ClusterState } from '../../model/facts.js';
import { pendingStatus, statusFor, type StatusInput, type TargetOutcome } from './status.js';

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

const HEADLESS_NOW = new Date('2026-01-01T00:00:00Z');

function headlessInput(facts: ClusterFacts[]): StatusInput {
  return {
    generation: 1,
    previous: undefined,
    facts,
    conflict: { lostDomains: [], with: [] },
    targets: [{ cluster: 'a', result: 'written' }],
    now: HEADLESS_NOW,
  };
}

const headless: ClusterFacts = {
  cluster: 'b',
  state: 'HeadlessService',
  addresses: [],
  ports: [],
  message: 'the Service is headless; use resolutionType: headless',
};

describe('statusFor: clusterIP naming a headless Service', () => {
  it.each([
    [
      'only headless clusters',
      [headless],
      'False',
      'HeadlessService',
      /headless in b.*resolutionType: headless/,
    ],
    [
      'a Ready cluster beside a headless one',
      [{ cluster: 'a', state: 'Ready', addresses: ['10.96.0.1'], ports: [] } as ClusterFacts, headless],
      'True',
      'Ready',
      /not published: b: HeadlessService/,
    ],
  ] as const)('%s', (_what, facts, status, reason, message) => {
    const got = statusFor(headlessInput([...facts]));
    const ready = got.conditions?.find((c) => c.type === 'Ready');
    expect([ready?.status, ready?.reason]).toEqual([status, reason]);
    expect(ready?.message).toMatch(message);
    expect(got.clusters?.find((c) => c.cluster === 'b')).toEqual({
      cluster: 'b',
      state: 'HeadlessService',
      message: headless.message,
    });
  });
});

describe('statusFor at fleet scale: bounded whatever fails', () => {
  const longError = `dial tcp 10.0.0.1:6443: ${'no answer within 10000 ms; '.repeat(2_000)}`;
  const fleet = Array.from({ length: 1_000 }, (_, i) => `c${String(i).padStart(4, '0')}`);
  const facts: ClusterFacts[] = fleet.map((cluster, i) =>
    i === 0
      ? { cluster, state: 'Ready', addresses: ['192.0.2.1'], ports: [] }
      : { cluster, state: 'Unreachable', addresses: ['192.0.2.2'], ports: [], error: longError },
  );
  const targets: TargetOutcome[] = fleet.map((cluster) => ({ cluster, result: 'failed', error: longError }));
  const status = statusFor({
    generation: 1,
    previous: undefined,
    facts,
    conflict: NO_CONFLICT,
    targets,
    now: NOW,
  });
  const ready = status.conditions?.find((c) => c.type === 'Ready');

  it('summarises in the condition: counts, the first clusters by name, and the rest counted', () => {
    expect(ready).toMatchObject({ status: 'False', reason: 'ClusterUnreachable' });
    expect(ready?.message).toMatch(
      /^999 of 1000 selected clusters unreachable, last known addresses kept: c0001 \(source: /,
    );
    expect(ready?.message).toMatch(
      /; and 996 more; 1000 of 1000 workload clusters not written: c0000 \(target: /,
    );
    expect(Buffer.byteLength(ready?.message ?? '', 'utf8')).toBeLessThan(2048);
  });

  it('names every cluster in status.clusters[], each message capped', () => {
    expect(status.clusters?.map((c) => c.cluster)).toEqual(fleet);
    for (const c of status.clusters ?? [])
      expect(Buffer.byteLength(c.lastError ?? '', 'utf8')).toBeLessThanOrEqual(300);
    expect(status.clusters?.[1]?.lastError).toMatch(/^dial tcp 10\.0\.0\.1:6443: no answer.*…$/);
  });

  it('stays far below the API object limit as a whole', () => {
    expect(Buffer.byteLength(JSON.stringify(status), 'utf8')).toBeLessThan(1_000_000);
  });
});

describe('statusFor: HostnamesAccepted, a condition of its own for custom host names', () => {
  const base = (hostnames?: StatusInput['hostnames'], previous?: StatusInput['previous']): StatusInput => ({
    generation: 3,
    previous,
    facts: [f('a', 'Ready', ['10.0.0.1'])],
    conflict: NO_CONFLICT,
    targets: [ok('a')],
    now: NOW,
    hostnames,
  });
  const condition = (status: ReturnType<typeof statusFor>, type: string) =>
    status.conditions?.find((c) => c.type === type);

  it('is absent while no host name is asked for, and removed when the last one goes', () => {
    const served = statusFor(base({ served: ['db.xcc.test'], refused: [] }));
    expect(condition(served, 'HostnamesAccepted')).toMatchObject({
      status: 'True',
      reason: 'Accepted',
      message: 'served: db.xcc.test',
      observedGeneration: 3,
    });
    expect(condition(statusFor(base()), 'HostnamesAccepted')).toBeUndefined();
    expect(
      condition(statusFor(base({ served: [], refused: [] }, served)), 'HostnamesAccepted'),
    ).toBeUndefined();
  });

  it('a name an older GatewayDNS holds: Conflict here and in Ready, as for the generated names', () => {
    const status = statusFor(
      base({
        served: ['mine.xcc.test'],
        refused: [
          { name: 'db.xcc.test', reason: 'claimed by the older gatewaydns team-b/db', kind: 'Conflict' },
        ],
      }),
    );
    expect(condition(status, 'HostnamesAccepted')).toMatchObject({
      status: 'False',
      reason: 'Conflict',
      message: 'not served: db.xcc.test (claimed by the older gatewaydns team-b/db); served: mine.xcc.test',
    });
    expect(condition(status, 'Ready')).toMatchObject({ status: 'False', reason: 'Conflict' });
    expect(condition(status, 'Ready')?.message).toMatch(/hostnames not served: db\.xcc\.test \(claimed by/);
  });

  it('a name no GatewayDNS may have: Invalid here; Ready stays True and names it', () => {
    const status = statusFor(
      base({
        served: [],
        refused: [{ name: 'db.example.com', reason: 'outside the zone xcc.test', kind: 'Invalid' }],
      }),
    );
    expect(condition(status, 'HostnamesAccepted')).toMatchObject({ status: 'False', reason: 'Invalid' });
    expect(condition(status, 'Ready')).toMatchObject({ status: 'True', reason: 'Ready' });
    expect(condition(status, 'Ready')?.message).toMatch(
      /hostnames not served: db\.example\.com \(outside the zone/,
    );
  });
});
