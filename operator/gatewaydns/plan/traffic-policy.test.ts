import { shardViews, type DesiredInput } from './desired.js';
import { candidatePolicy, tierOf, weightOf } from './traffic-policy.js';
import type { ClusterFacts } from '../../model/facts.js';
import { validateGatewayDnsSpec, type EffectiveSpec } from '../../model/validate.js';

function spec(fields: Record<string, unknown>): EffectiveSpec {
  const v = validateGatewayDnsSpec({ clusterSelector: {}, service: 'projectcontour/envoy', ...fields });
  if (!v.valid) throw new Error(v.message);
  return v.spec;
}

function facts(cluster: string, addresses: string[], probePort?: number): ClusterFacts {
  return { cluster, state: 'Ready', addresses, ports: [], ...(probePort ? { probePort } : {}) };
}

const FAILOVER = {
  answer: 'failover',
  failover: [
    { clusterSelector: { matchLabels: { region: 'eu' } } },
    { clusterSelector: { matchLabels: { region: 'us' } } },
  ],
  weights: [{ clusterSelector: { matchLabels: { size: 'large' } }, weight: 3 }],
  healthCheck: { protocol: 'HTTP', port: 8080, path: '/healthz' },
};

describe('validation of the traffic policy', () => {
  it.each([
    [{ answer: 'failover' }, 'spec.answer failover needs at least one tier in spec.failover'],
    [
      { answer: 'all', failover: [{ clusterSelector: {} }] },
      'spec.failover applies to answer failover or localFirst, not all',
    ],
    [
      { healthCheck: { protocol: 'TCP', path: '/x' } },
      'spec.healthCheck: path and host are for protocol HTTP and HTTPS',
    ],
    [
      { healthCheck: { periodSeconds: 2, timeoutSeconds: 3 } },
      'spec.healthCheck: timeoutSeconds (3) must not exceed periodSeconds (2)',
    ],
    [{ weights: [{ clusterSelector: {}, weight: 1001 }] }, 'spec.weights.0.weight must be <= 1000'],
    [
      { healthCheck: { protocol: 'UDP' } },
      'spec.healthCheck.protocol must be equal to one of the allowed values',
    ],
    [
      {
        answer: 'failover',
        failover: [{ clusterSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } }],
      },
      'spec.failover[0].clusterSelector.matchExpressions[0]: In needs at least one value',
    ],
  ])('refuses %j: %s', (fields, message) => {
    const v = validateGatewayDnsSpec({ clusterSelector: {}, service: 'projectcontour/envoy', ...fields });
    expect(v).toEqual({ valid: false, message });
  });

  it('fills in the defaults of the check and whenNoneHealthy; no policy without tiers, weights or a check', () => {
    expect(spec({ healthCheck: {} }).trafficPolicy).toEqual({
      tiers: [],
      healthCheck: {
        protocol: 'TCP',
        periodSeconds: 2,
        timeoutSeconds: 1,
        failureThreshold: 2,
        successThreshold: 2,
      },
      whenNoneHealthy: 'answerAll',
    });
    expect(
      spec({ healthCheck: { protocol: 'HTTPS', host: 'shop.example' } }).trafficPolicy?.healthCheck,
    ).toMatchObject({
      path: '/',
      host: 'shop.example',
    });
    expect(spec({}).trafficPolicy).toBeUndefined();
  });
});

describe('candidatePolicy', () => {
  const s = spec(FAILOVER);
  const policy = s.trafficPolicy!;

  it('puts a cluster in the first tier that matches, clusters in none in a last tier', () => {
    expect(tierOf(policy, { region: 'eu' })).toBe(0);
    expect(tierOf(policy, { region: 'us' })).toBe(1);
    expect(tierOf(policy, { region: 'ap' })).toBe(2);
    expect(tierOf(policy, undefined)).toBe(2);
  });

  it('weighs a cluster by the first entry that matches, else 1', () => {
    expect(weightOf(policy, { size: 'large' })).toBe(3);
    expect(weightOf(policy, {})).toBe(1);
  });

  it('gives the check with its port, the candidate its cluster, tier and weight', () => {
    expect(
      candidatePolicy(s, {
        namespace: 'dev',
        cluster: 'a',
        labels: { region: 'us', size: 'large' },
        probePort: 80,
        local: false,
      }),
    ).toEqual({
      cluster: 'dev/a',
      tier: 1,
      weight: 3,
      healthCheck: {
        protocol: 'HTTP',
        port: 8080,
        path: '/healthz',
        periodSeconds: 2,
        timeoutSeconds: 1,
        failureThreshold: 2,
        successThreshold: 2,
      },
      whenNoneHealthy: 'answerAll',
    });
  });

  it("takes the Service's port when the check names none, and leaves the check out when none is known", () => {
    const noPort = spec({ healthCheck: {} });
    const at = (probePort: number | undefined) =>
      candidatePolicy(noPort, { namespace: 'dev', cluster: 'a', labels: {}, probePort, local: false });
    expect(at(443)?.healthCheck?.port).toBe(443);
    expect(at(undefined)?.healthCheck).toBeUndefined();
  });

  it('localFirst: the own cluster is tier 0, the tiers follow', () => {
    const lf = spec({ ...FAILOVER, answer: 'localFirst' });
    const at = (local: boolean) =>
      candidatePolicy(lf, { namespace: 'dev', cluster: 'a', labels: { region: 'eu' }, probePort: 80, local })
        ?.tier;
    expect([at(true), at(false)]).toEqual([0, 1]);
  });
});

describe('record sets with a traffic policy', () => {
  const input = (s: EffectiveSpec): Omit<DesiredInput, 'receivingCluster'> => ({
    namespace: 'dev',
    name: 'gw',
    spec: s,
    suffix: 'xcc.test',
    facts: [
      facts('a', ['10.0.0.1', 'fd00::1'], 80),
      facts('b', ['10.0.0.2'], 80),
      facts('c', ['lb.example'], 80),
    ],
    clusterLabels: new Map<string, Record<string, string>>([
      ['a', { region: 'eu' }],
      ['b', { region: 'us', size: 'large' }],
    ]),
  });
  const shared = (shards: Map<string, { name: string; type: string; policy?: unknown }[]>) =>
    [...shards.values()].flat().filter((r) => r.name === '*.gateway.dev.clusters.xcc.test');

  it('marks each cluster-independent A and AAAA record with its candidate; per-cluster names carry none', () => {
    const shards = shardViews(input(spec(FAILOVER))).shards();
    expect(
      shared(shards).map((r) => [r.type, (r.policy as { cluster: string; tier: number }).cluster]),
    ).toEqual([
      ['A', 'dev/a'],
      ['AAAA', 'dev/a'],
      ['A', 'dev/b'],
    ]);
    expect([...shards.values()].flat().filter((r) => r.name.includes('.a.dev.') && r.policy)).toEqual([]);
  });

  it('localFirst with a policy: every cluster a candidate in every receiving cluster, the own one first', () => {
    const views = shardViews(input(spec({ ...FAILOVER, answer: 'localFirst' })));
    const tiers = (receiving: string) =>
      shared(views.shards(receiving)).map(
        (r) => `${(r.policy as { cluster: string }).cluster}:${(r.policy as { tier: number }).tier}`,
      );
    expect(tiers('b')).toEqual(['dev/a:1', 'dev/a:1', 'dev/b:0']);
    expect(tiers('a')).toEqual(['dev/a:0', 'dev/a:0', 'dev/b:2']);
  });
});
