import {
  chooseTier,
  DEFAULT_HEALTH_CHECK,
  probeTargetId,
  type HealthCheck,
  type TierCandidate,
} from './traffic-policy.js';

const CHECK: HealthCheck = { ...DEFAULT_HEALTH_CHECK, protocol: 'TCP', port: 443 };
const OTHER_PORT: HealthCheck = { ...CHECK, port: 8443 };

const checked = (tier: number, ...addresses: string[]): TierCandidate => ({
  tier,
  addresses,
  healthCheck: CHECK,
});
const unchecked = (tier: number, ...addresses: string[]): TierCandidate => ({ tier, addresses });
const down = (...addresses: string[]) => new Set(addresses.map((a) => probeTargetId(a, CHECK)));

describe('chooseTier: the first tier with a healthy candidate', () => {
  it('chooses nothing among no candidates', () => {
    expect(chooseTier([], new Set())).toEqual({ tier: undefined, answers: [], healthy: [], answering: [] });
  });

  it('answers with the first tier while every candidate is healthy', () => {
    const choice = chooseTier(
      [checked(1, '10.0.0.3'), checked(0, '10.0.0.1'), checked(0, '10.0.0.2')],
      down(),
    );
    expect(choice).toEqual({
      tier: 0,
      answers: [[true], [true], [true]],
      healthy: [true, true, true],
      answering: [false, true, true],
    });
  });

  it('goes to the next tier once every candidate of the first is unhealthy', () => {
    const candidates = [checked(0, '10.0.0.1'), checked(0, '10.0.0.2'), checked(1, '10.0.0.3')];
    expect(chooseTier(candidates, down('10.0.0.1')).answering).toEqual([false, true, false]);
    const failedOver = chooseTier(candidates, down('10.0.0.1', '10.0.0.2'));
    expect(failedOver.tier).toBe(1);
    expect(failedOver.healthy).toEqual([false, false, true]);
    expect(failedOver.answering).toEqual([false, false, true]);
  });

  it('skips tiers nobody is in: the lowest healthy tier answers, whatever its number', () => {
    const choice = chooseTier(
      [checked(5, '10.0.0.5'), checked(2, '10.0.0.2'), checked(9, '10.0.0.9')],
      down('10.0.0.2'),
    );
    expect(choice.tier).toBe(5);
    expect(choice.answering).toEqual([true, false, false]);
  });

  it('keeps a candidate while one of its addresses is healthy, and marks which ones answer', () => {
    const choice = chooseTier([checked(0, '10.0.0.1', '10.0.0.9'), checked(1, '10.0.0.3')], down('10.0.0.9'));
    expect(choice.tier).toBe(0);
    expect(choice.answers).toEqual([[true, false], [true]]);
    expect(choice.answering).toEqual([true, false]);
  });

  it("with no candidate healthy: no tier and nothing answering (what then answers is the caller's)", () => {
    const choice = chooseTier([checked(0, '10.0.0.1'), checked(1, '10.0.0.3')], down('10.0.0.1', '10.0.0.3'));
    expect(choice).toEqual({
      tier: undefined,
      answers: [[false], [false]],
      healthy: [false, false],
      answering: [false, false],
    });
  });

  it('counts a candidate without a check as healthy whatever the probes say', () => {
    const choice = chooseTier(
      [unchecked(0, '10.0.0.1'), checked(0, '10.0.0.2')],
      down('10.0.0.1', '10.0.0.2'),
    );
    expect(choice.healthy).toEqual([true, false]);
    expect(choice.answering).toEqual([true, false]);
  });

  it('counts a candidate without addresses as unhealthy, with or without a check', () => {
    const choice = chooseTier([unchecked(0), checked(0), checked(1, '10.0.0.3')], down());
    expect(choice.tier).toBe(1);
    expect(choice.healthy).toEqual([false, false, true]);
  });

  it("reads only the probes of the candidate's own check (an address probed on another port is another target)", () => {
    const otherPortDown = new Set([probeTargetId('10.0.0.1', OTHER_PORT)]);
    expect(chooseTier([checked(0, '10.0.0.1'), checked(1, '10.0.0.3')], otherPortDown).tier).toBe(0);
    const sameAddress = [
      checked(0, '10.0.0.1'),
      { tier: 0, addresses: ['10.0.0.1'], healthCheck: OTHER_PORT },
    ];
    expect(chooseTier(sameAddress, down('10.0.0.1')).answering).toEqual([false, true]);
  });

  it('probes IPv6 addresses by the same target ids', () => {
    const choice = chooseTier(
      [checked(0, '2001:db8::1', '10.0.0.1'), checked(1, '2001:db8::3')],
      down('2001:db8::1', '10.0.0.1'),
    );
    expect(choice.tier).toBe(1);
  });

  it('agrees with its definition on every small case: 3 candidates, tiers 0–2, each healthy or not', () => {
    const addresses = ['10.0.0.1', '10.0.0.2', '10.0.0.3'];
    for (let tiers = 0; tiers < 27; tiers++)
      for (let downMask = 0; downMask < 8; downMask++) {
        const candidates = addresses.map((a, i) => checked(Math.floor(tiers / 3 ** i) % 3, a));
        const isDown = (i: number) => (downMask & (1 << i)) !== 0;
        const choice = chooseTier(candidates, down(...addresses.filter((_, i) => isDown(i))));
        const healthyTiers = candidates.filter((_, i) => !isDown(i)).map((c) => c.tier);
        const tier = healthyTiers.length ? Math.min(...healthyTiers) : undefined;
        expect(choice.tier).toBe(tier);
        expect(choice.healthy).toEqual(candidates.map((_, i) => !isDown(i)));
        expect(choice.answering).toEqual(candidates.map((c, i) => !isDown(i) && c.tier === tier));
      }
  });
});
