import { statusFor, type StatusInput } from './status.js';
import type { ClusterFacts } from './facts.js';

const now = new Date('2026-01-01T00:00:00Z');

function input(facts: ClusterFacts[]): StatusInput {
  return {
    generation: 1,
    previous: undefined,
    facts,
    conflict: { lostDomains: [], with: [] },
    targets: [{ cluster: 'a', result: 'written' }],
    now,
  };
}

const headless: ClusterFacts = {
  cluster: 'b',
  state: 'HeadlessService',
  addresses: [],
  ports: [],
  message: 'the Service is headless; use resolutionType: headless',
};

describe('statusFor', () => {
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
    const got = statusFor(input([...facts]));
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
