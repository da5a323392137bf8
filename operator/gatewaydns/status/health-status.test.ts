import { probeTargetId, type GatewayDNSStatus, type ProbeReport } from '../../../api/index.js';
import type { ClusterFacts } from '../../model/facts.js';
import { validateGatewayDnsSpec, type EffectiveSpec } from '../../model/validate.js';
import { CONDITION_MESSAGE_MAX } from '../../manager/runtime/summary.js';
import { withHealthStatus, UNHEALTHY_FROM_NAMED } from './health-status.js';
import { healthViewOf, type VantageReports } from './health-view.js';

const NOW = new Date('2026-11-26T10:00:00Z');

function spec(fields: Record<string, unknown>): EffectiveSpec {
  const v = validateGatewayDnsSpec({ clusterSelector: {}, service: 'projectcontour/envoy', ...fields });
  if (!v.valid) throw new Error(v.message);
  return v.spec;
}

const FAILOVER = spec({
  answer: 'failover',
  failover: [{ clusterSelector: { matchLabels: { region: 'eu' } } }],
  healthCheck: { protocol: 'HTTP', port: 8080, path: '/healthz' },
});
const CHECK = {
  protocol: 'HTTP' as const,
  port: 8080,
  path: '/healthz',
  periodSeconds: 2,
  timeoutSeconds: 1,
  failureThreshold: 2,
  successThreshold: 2,
};

const facts = (cluster: string, ...addresses: string[]): ClusterFacts => ({
  cluster,
  state: 'Ready',
  addresses,
  ports: [],
});
const down = (...addresses: string[]): ProbeReport => ({
  probing: 4,
  unhealthy: addresses.map((a) => ({ target: probeTargetId(a, CHECK), since: NOW.toISOString() })),
});
const labels = new Map<string, Record<string, string>>([
  ['a', { region: 'eu' }],
  ['b', { region: 'us' }],
  ['c', { region: 'us' }],
]);

function status(view: ReturnType<typeof healthViewOf>, previous?: GatewayDNSStatus): GatewayDNSStatus {
  const base: GatewayDNSStatus = {
    ...previous,
    clusters: ['a', 'b', 'c'].map((cluster) => ({ cluster, state: 'Ready' })),
  };
  return withHealthStatus(base, view, 'answerAll', 3, NOW);
}

const degraded = (s: GatewayDNSStatus) => s.conditions?.find((c) => c.type === 'Degraded');

describe('the health view in status', () => {
  const candidates = [facts('a', '10.0.0.1', '10.0.0.2'), facts('b', '10.0.1.1'), facts('c', 'c.example.')];

  it('says every candidate is healthy while every report is empty, and counts the reporting clusters', () => {
    const view = healthViewOf({
      namespace: 'team',
      spec: FAILOVER,
      facts: candidates,
      clusterLabels: labels,
      vantages: [
        { cluster: 'a', reports: [down()] },
        { cluster: 'b', reports: [down(), down()] },
        { cluster: 'c', reports: [] },
      ],
    });
    const s = status(view);
    // c publishes a host name only: nothing to probe, so no health of its own.
    expect(s.clusters?.map((c) => c.health)).toEqual([
      { healthyFrom: 2, reportingClusters: 2 },
      { healthyFrom: 2, reportingClusters: 2 },
      undefined,
    ]);
    expect(degraded(s)).toMatchObject({
      status: 'False',
      reason: 'AllHealthy',
      message:
        'every candidate is healthy from 2 of 3 workload clusters, each answering from its first tier; no report yet from c',
      observedGeneration: 3,
    });
  });

  it('names who failed over from which tier to which, as seen from where, while a candidate keeps one healthy address', () => {
    const vantages: VantageReports[] = [
      // b's two replicas: one cannot reach a at all.
      { cluster: 'b', reports: [down('10.0.0.1', '10.0.0.2'), down()] },
      // c reaches one of a's two addresses: a stays healthy there.
      { cluster: 'c', reports: [down('10.0.0.1')] },
      { cluster: 'a', reports: [down()] },
    ];
    const s = status(
      healthViewOf({ namespace: 'team', spec: FAILOVER, facts: candidates, clusterLabels: labels, vantages }),
    );
    expect(s.clusters?.[0]?.health).toEqual({ healthyFrom: 2, reportingClusters: 3, unhealthyFrom: ['b'] });
    expect(degraded(s)).toMatchObject({
      status: 'True',
      reason: 'FailedOver',
      message: 'a unhealthy from 1 of 3 reporting clusters (b); failed over from tier 0 to tier 1 (b) in b',
    });
  });

  it('localFirst: a cluster whose own gateway is down answers from the tiers, the others keep their own', () => {
    const localFirst = spec({
      answer: 'localFirst',
      failover: [{ clusterSelector: { matchLabels: { region: 'eu' } } }],
      healthCheck: { protocol: 'HTTP', port: 8080, path: '/healthz' },
    });
    const view = healthViewOf({
      namespace: 'team',
      spec: localFirst,
      facts: candidates.slice(0, 2),
      clusterLabels: labels,
      vantages: [
        { cluster: 'b', reports: [down('10.0.1.1')] },
        { cluster: 'a', reports: [down('10.0.1.1')] },
      ],
    });
    expect(view?.vantages).toEqual([
      { cluster: 'a', first: 0, answering: 0, answeringClusters: ['a'] },
      { cluster: 'b', first: 0, answering: 1, answeringClusters: ['a'] },
    ]);
    expect(degraded(status(view))?.message).toBe(
      'b unhealthy from 2 of 2 reporting clusters (a, b); failed over from tier 0 to tier 1 (a) in b',
    );
  });

  it('none healthy: says what whenNoneHealthy answers; no report anywhere: Unknown, with the errors', () => {
    const both = healthViewOf({
      namespace: 'team',
      spec: FAILOVER,
      facts: candidates.slice(0, 2),
      clusterLabels: labels,
      vantages: [{ cluster: 'b', reports: [down('10.0.0.1', '10.0.0.2', '10.0.1.1')] }],
    });
    expect(degraded(status(both))).toMatchObject({
      reason: 'NoneHealthy',
      message: expect.stringContaining(
        'no candidate healthy from b: answering every address (whenNoneHealthy: answerAll)',
      ),
    });
    const none = healthViewOf({
      namespace: 'team',
      spec: FAILOVER,
      facts: candidates.slice(0, 2),
      clusterLabels: labels,
      vantages: [
        { cluster: 'a', reports: [], error: 'configmaps is forbidden' },
        { cluster: 'b', reports: [] },
      ],
    });
    expect(degraded(status(none))).toMatchObject({
      status: 'Unknown',
      reason: 'NoReports',
      message:
        'no dns-server has reported its probes yet (2 workload cluster(s)); no report yet from b; reports not read from a (configmaps is forbidden)',
    });
  });

  it('without a health check there is no Degraded condition, and one set before is removed', () => {
    const plain = spec({});
    expect(
      healthViewOf({
        namespace: 'team',
        spec: plain,
        facts: candidates,
        clusterLabels: labels,
        vantages: [],
      }),
    ).toBeUndefined();
    const before = status(
      healthViewOf({
        namespace: 'team',
        spec: FAILOVER,
        facts: candidates,
        clusterLabels: labels,
        vantages: [{ cluster: 'a', reports: [down()] }],
      }),
    );
    expect(degraded(before)).toBeDefined();
    expect(degraded(withHealthStatus(before, undefined, undefined, 4, NOW))).toBeUndefined();
  });

  it('stays bounded at 1,000 clusters: the first few names and counts', () => {
    const names = Array.from({ length: 1000 }, (_, i) => `c${String(i).padStart(4, '0')}`);
    const many = names.map((n, i) => facts(n, `10.${i >> 8}.${i & 255}.1`));
    // Every cluster finds every other unhealthy.
    const allDown = down(...many.map((f) => f.addresses[0]!));
    const view = healthViewOf({
      namespace: 'team',
      spec: FAILOVER,
      facts: many,
      clusterLabels: new Map(names.map((n, i) => [n, { region: i % 2 ? 'us' : 'eu' }])),
      vantages: names.map((cluster) => ({ cluster, reports: [allDown] })),
    });
    const s = withHealthStatus(
      { clusters: names.map((cluster) => ({ cluster, state: 'Ready' })) },
      view,
      'answerNone',
      1,
      NOW,
    );
    expect(s.clusters?.[0]?.health?.unhealthyFrom).toHaveLength(UNHEALTHY_FROM_NAMED);
    expect(s.clusters?.[0]?.health).toMatchObject({ healthyFrom: 0, reportingClusters: 1000 });
    const message = degraded(s)?.message ?? '';
    expect(Buffer.byteLength(message)).toBeLessThan(CONDITION_MESSAGE_MAX);
    expect(message).toContain('and 997 more');
    expect(message).toContain('answering no address (whenNoneHealthy: answerNone)');
  });
});
