import { parse } from 'yaml';
import { Values } from './values.js';

describe('Values', () => {
  it('writes values.yaml nested, each value with its description as a helm-docs comment', () => {
    const v = new Values();
    v.set('operator.replicas', 3);
    v.set('zone', 'xcc.test');
    const text = v.yaml('# header\n');
    expect(parse(text)).toEqual({ zone: 'xcc.test', operator: { replicas: 3 } });
    expect(text).toMatch(/^# header\n# -- The DNS zone/);
    expect(text).toMatch(/ {2}# -- Operator replicas.*\n {2}replicas: 3\n/);
  });

  it('fails on one value with two defaults (config/ disagreeing with itself) and on one without a description', () => {
    const v = new Values();
    v.set('zone', 'xcc.test');
    v.set('zone', 'xcc.test');
    expect(() => v.set('zone', 'example.org')).toThrow(/zone to "xcc.test" in one place and "example.org"/);
    expect(() => v.set('operator.nope', 1)).toThrow(/no description/);
  });

  it('lists the values in a markdown table', () => {
    const v = new Values();
    v.set('operator.replicas', 3);
    expect(v.markdownTable()).toContain('| `operator.replicas` | `3` | Operator replicas');
  });
});
