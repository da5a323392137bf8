import { probeTargetId, type DNSRecord, type RecordPolicy } from '../../api/index.js';
import { compileZones } from './compile.js';
import { HTTP_CHECK as CHECK, recordSet, sourced, zoneConfig } from './fixtures.test-support.js';
import { presentRR, T } from './rr.js';
import { drawTable } from './policy.js';

const NAME = 'shop.xcc.test';

function candidate(cluster: string, values: string[], policy: Partial<RecordPolicy> = {}): DNSRecord {
  return {
    name: NAME,
    type: values[0]!.includes(':') ? 'AAAA' : 'A',
    values,
    policy: { cluster, tier: 0, healthCheck: CHECK, ...policy },
  };
}

const down = (...addresses: string[]) => new Set(addresses.map((a) => probeTargetId(a, CHECK)));

function answers(records: DNSRecord[], unhealthy = new Set<string>(), type: number = T.A): string[] {
  const built = compileZones(
    sourced(...records.map((r, i) => recordSet(`s${i}`, [r]))),
    [zoneConfig()],
    1,
    undefined,
    unhealthy,
  );
  expect(built.problems).toEqual([]);
  return built.zones[0]!.lookup(NAME, type).answer.map((rr) => presentRR(rr).split(' ').pop()!);
}

describe('traffic policy: the answer this dns-server chooses', () => {
  const eu = candidate('dev/a', ['10.0.0.1'], { tier: 0 });
  const eu2 = candidate('dev/b', ['10.0.0.2'], { tier: 0 });
  const us = candidate('dev/c', ['10.0.0.3'], { tier: 1 });

  it('answers the first tier with a healthy candidate, its candidates together without weights', () => {
    expect(answers([eu, eu2, us])).toEqual(['10.0.0.1', '10.0.0.2']);
    expect(answers([eu, eu2, us], down('10.0.0.1'))).toEqual(['10.0.0.2']);
    expect(answers([eu, eu2, us], down('10.0.0.1', '10.0.0.2'))).toEqual(['10.0.0.3']);
  });

  it('keeps a candidate while one of its addresses is healthy, answering only those', () => {
    const two = candidate('dev/a', ['10.0.0.1', '10.0.0.9'], { tier: 0 });
    expect(answers([two, us], down('10.0.0.9'))).toEqual(['10.0.0.1']);
  });

  it('with none healthy: every candidate (answerAll, fail open), or none (answerNone: NODATA)', () => {
    const all = down('10.0.0.1', '10.0.0.2', '10.0.0.3');
    expect(answers([eu, eu2, us], all)).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3']);
    const none = [eu, eu2, us].map((r) => ({
      ...r,
      policy: { ...r.policy!, whenNoneHealthy: 'answerNone' as const },
    }));
    const built = compileZones(
      sourced(...none.map((r, i) => recordSet(`s${i}`, [r]))),
      [zoneConfig()],
      1,
      undefined,
      all,
    );
    const answer = built.zones[0]!.lookup(NAME, T.A);
    expect(answer.rcode).toBe(0);
    expect(answer.answer).toEqual([]);
  });

  it('without a check, readiness alone decides: the first tier answers', () => {
    const plain = [eu, us].map((r) => ({
      ...r,
      policy: { cluster: r.policy!.cluster, tier: r.policy!.tier },
    }));
    expect(answers(plain, down('10.0.0.1'))).toEqual(['10.0.0.1']);
  });

  it('chooses A and AAAA each by itself', () => {
    const v6 = candidate('dev/c', ['fd00::3'], { tier: 1 });
    expect(answers([eu, us, v6], new Set(), T.AAAA)).toEqual(['fd00:0:0:0:0:0:0:3']);
  });

  it('asks to probe each address with its check once, and reports the answering tier', () => {
    const built = compileZones(
      sourced(recordSet('x', [eu, us]), recordSet('y', [eu])),
      [zoneConfig()],
      1,
      undefined,
      down('10.0.0.1'),
    );
    expect(built.probeTargets.map((t) => t.address).sort()).toEqual(['10.0.0.1', '10.0.0.3']);
    expect(built.answeringTiers.get(`${NAME}/A`)).toBe(1);
  });

  it('changes the fingerprint when the chosen answer changes, not when nothing does', () => {
    const fp = (unhealthy: Set<string>) =>
      compileZones(sourced(recordSet('x', [eu, us])), [zoneConfig()], 1, undefined, unhealthy).fingerprint;
    expect(fp(new Set())).toBe(fp(down('10.0.0.3')));
    expect(fp(new Set())).not.toBe(fp(down('10.0.0.1')));
  });

  it('reports a malformed policy with its record and serves the rest', () => {
    const bad = { ...eu, policy: { cluster: 'dev/a', tier: 99 } };
    const built = compileZones(sourced(recordSet('x', [bad, us])), [zoneConfig()], 1);
    expect(built.problems).toEqual([
      { source: 'test:x', record: `${NAME}/A`, reason: 'policy.tier 99 is not an integer from 0 to 64' },
    ]);
    expect(built.zones[0]!.lookup(NAME, T.A).answer.map(presentRR)).toEqual([`${NAME}. 30 IN A 10.0.0.3`]);
  });
});

describe('drawTable', () => {
  it('makes a draw table in proportion to the weights, at most `size` entries', () => {
    expect(drawTable([3, 1])).toEqual([0, 0, 0, 1]);
    expect(drawTable([0, 2])).toEqual([1, 1]);
    const big = drawTable([1000, 1000, 1]);
    expect(big.length).toBeLessThanOrEqual(1001);
    expect(big.filter((i) => i === 2)).toHaveLength(1);
  });
});
