import { matchesSelector, parseSelector, SelectorSyntaxError } from './selector.js';

describe('parseSelector (the syntax of kubectl -l)', () => {
  it('reads equality and set requirements, ANDed', () => {
    expect(parseSelector('region=eu, env in (prod, staging),tier!=db,gpu,!legacy,zone==a')).toEqual({
      matchLabels: { region: 'eu', zone: 'a' },
      matchExpressions: [
        { key: 'env', operator: 'In', values: ['prod', 'staging'] },
        { key: 'tier', operator: 'NotIn', values: ['db'] },
        { key: 'gpu', operator: 'Exists' },
        { key: 'legacy', operator: 'DoesNotExist' },
      ],
    });
    expect(parseSelector('')).toEqual({});
    const s = parseSelector('topology.kubernetes.io/region notin (us-east-1)');
    expect(matchesSelector(s, { 'topology.kubernetes.io/region': 'eu-west-1' })).toBe(true);
    expect(matchesSelector(s, { 'topology.kubernetes.io/region': 'us-east-1' })).toBe(false);
  });

  it.each([
    ['region in (eu', 'unbalanced "(" in "region in (eu"'],
    ['region=eu)', 'unbalanced ")"'],
    ['region=e u', '"region=e u" is not a requirement'],
    ['Region_/x=1', '"Region_/x" is not a label key'],
    ['a=b,a=c', 'a asked to equal two values'],
    ['a in (x y)', '"x y" is not a label value'],
  ])('refuses %j: %s', (text, message) => {
    expect(() => parseSelector(text)).toThrow(SelectorSyntaxError);
    expect(() => parseSelector(text)).toThrow(message);
  });
});
