import { validateGatewayDnsSpec } from './validate.js';
import { matchesSelector } from './selector.js';
import { setCondition, setConditionWhile } from './conditions.js';

describe('validateGatewayDnsSpec', () => {
  it('fills in defaults for the walkthrough manifest', () => {
    expect(
      validateGatewayDnsSpec({
        clusterSelector: { matchLabels: { hasContour: 'true' } },
        service: 'projectcontour/envoy',
      }),
    ).toEqual({
      valid: true,
      spec: {
        clusterSelector: { matchLabels: { hasContour: 'true' } },
        serviceNamespace: 'projectcontour',
        serviceName: 'envoy',
        resolutionType: 'loadBalancer',
        answer: 'all',
        hostnames: [],
        gatewayLabel: 'gateway',
        nodeAddressTypes: ['ExternalIP', 'InternalIP'],
        ttl: 30,
      },
    });
  });

  it('takes spec.gatewayRef instead of spec.service', () => {
    const v = validateGatewayDnsSpec({
      clusterSelector: {},
      gatewayRef: { namespace: 'infra', name: 'edge' },
    });
    expect(v).toMatchObject({
      valid: true,
      spec: { gateway: { namespace: 'infra', name: 'edge' }, serviceNamespace: '', serviceName: '' },
    });
  });

  it.each([
    [undefined, 'spec is missing'],
    [{ clusterSelector: {}, service: 'envoy' }, 'spec.service must match pattern'],
    [
      { clusterSelector: {}, service: 'a/b', resolutionType: 'externalIP' },
      'spec.resolutionType must be equal to one of',
    ],
    [{ service: 'a/b' }, "must have required property 'clusterSelector'"],
    [{ clusterSelector: {}, service: 'a/b', ttl: -1 }, 'spec.ttl must be >= 0'],
    [
      { clusterSelector: { matchExpressions: [{ key: 'k', operator: 'In' }] }, service: 'a/b' },
      'In needs at least one value',
    ],
    [
      {
        clusterSelector: { matchExpressions: [{ key: 'k', operator: 'Exists', values: ['x'] }] },
        service: 'a/b',
      },
      'takes no values',
    ],
    [{ clusterSelector: {} }, 'exactly one of spec.service and spec.gatewayRef'],
    [
      { clusterSelector: {}, service: 'a/b', gatewayRef: { namespace: 'infra', name: 'edge' } },
      'exactly one of spec.service and spec.gatewayRef',
    ],
    [
      { clusterSelector: {}, gatewayRef: { namespace: 'infra', name: 'edge' }, resolutionType: 'nodePort' },
      'resolutionType applies to spec.service',
    ],
    [
      { clusterSelector: {}, gatewayRef: { namespace: 'infra', name: 'edge' }, mirror: {} },
      'spec.mirror mirrors a Service',
    ],
    [{ clusterSelector: {}, gatewayRef: { namespace: 'infra' } }, "must have required property 'name'"],
  ])('rejects %j with a clear message', (spec, message) => {
    const v = validateGatewayDnsSpec(spec);
    expect(v.valid).toBe(false);
    if (!v.valid) expect(v.message).toContain(message);
  });
});

describe('matchesSelector', () => {
  const labels = { hasContour: 'true', env: 'dev' };
  it.each([
    [{}, true],
    [{ matchLabels: { hasContour: 'true' } }, true],
    [{ matchLabels: { hasContour: 'false' } }, false],
    [{ matchExpressions: [{ key: 'env', operator: 'In' as const, values: ['dev', 'prod'] }] }, true],
    [{ matchExpressions: [{ key: 'env', operator: 'NotIn' as const, values: ['dev'] }] }, false],
    [{ matchExpressions: [{ key: 'zone', operator: 'NotIn' as const, values: ['x'] }] }, true],
    [{ matchExpressions: [{ key: 'env', operator: 'Exists' as const }] }, true],
    [{ matchExpressions: [{ key: 'env', operator: 'DoesNotExist' as const }] }, false],
  ])('%j → %s', (selector, want) => {
    expect(matchesSelector(selector, labels)).toBe(want);
  });
});

describe('setCondition', () => {
  const t1 = new Date('2024-01-01T00:00:00Z');
  const t2 = new Date('2024-01-02T00:00:00Z');
  it('keeps lastTransitionTime unless the status flips', () => {
    const first = setCondition(
      undefined,
      { type: 'Ready', status: 'False', reason: 'NoAddresses', message: 'x' },
      t1,
    );
    const same = setCondition(
      first,
      { type: 'Ready', status: 'False', reason: 'ServiceNotFound', message: 'y' },
      t2,
    );
    expect(same[0]?.lastTransitionTime).toBe(t1.toISOString());
    const flipped = setCondition(same, { type: 'Ready', status: 'True', reason: 'Ready', message: 'z' }, t2);
    expect(flipped[0]?.lastTransitionTime).toBe(t2.toISOString());
    expect(flipped).toHaveLength(1);
  });
});

describe('setConditionWhile', () => {
  const t1 = new Date('2024-01-01T00:00:00Z');
  const ready = {
    type: 'Ready',
    status: 'True' as const,
    reason: 'Ready',
    message: 'in force',
    lastTransitionTime: t1.toISOString(),
  };
  const signed = { status: 'False' as const, reason: 'KeyNotFound', message: 'no Secret' };
  it('sets the condition while asked for, leaves it when not computed, removes it when not asked for', () => {
    const set = setConditionWhile([ready], true, 'Signed', signed, t1);
    expect(set.map((c) => [c.type, c.reason])).toEqual([
      ['Ready', 'Ready'],
      ['Signed', 'KeyNotFound'],
    ]);
    expect(setConditionWhile(set, true, 'Signed', undefined, t1)).toBe(set);
    expect(setConditionWhile(set, false, 'Signed', signed, t1).map((c) => c.type)).toEqual(['Ready']);
  });
});
