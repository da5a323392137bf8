// config/monitoring/ is what scripts/monitoring renders; the rules pass
// `promtool check rules` and the scenarios of rule-tests.ts under
// `promtool test rules` (Debian's prometheus package, scripts/install-system-deps.sh);
// the PrometheusRule carries the same groups in the shape its CRD accepts (the
// CRD is installed nowhere here); every dashboard query is valid PromQL; every
// alert has a runbook line in docs/operating.md (whose metrics tables
// test/integration/monitoring.test.ts holds against the real /metrics).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { parseAllDocuments, stringify } from 'yaml';
import { dashboards, grafanaJson } from './dashboards.js';
import { renderMonitoring } from './render.js';
import { alertsWithoutFiringScenario, ruleTestsFile } from './rule-tests.js';
import { ruleGroups } from './rules.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const MONITORING = path.join(ROOT, 'config', 'monitoring');
const read = (file: string) => readFileSync(path.join(MONITORING, file), 'utf8');

/** promtool's output (stdout and stderr: it reports lint findings there); throws unless it exits 0 without FAILED. */
function promtool(args: string[]): string {
  const run = spawnSync('promtool', args, { encoding: 'utf8' });
  const output = `${run.stdout ?? ''}${run.stderr ?? ''}`;
  if (run.status !== 0 || /FAILED/.test(output))
    throw new Error(
      `promtool ${args.join(' ')} failed (${run.error?.message ?? `exit ${run.status}`}):\n${output}`,
    );
  return output;
}

let dir: string;
beforeAll(() => (dir = mkdtempSync(path.join(tmpdir(), 'capi-dns-rules-'))));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('config/monitoring', () => {
  it('is what scripts/monitoring renders (npm run generate:monitoring)', async () => {
    for (const [file, text] of await renderMonitoring(ROOT))
      expect({ file, text: read(file) }).toEqual({ file, text });
  });

  it('passes promtool check rules', () => {
    expect(promtool(['check', 'rules', path.join(MONITORING, 'prometheus-rules.yaml')])).toMatch(/SUCCESS/);
  });

  it('fires each alert on the series it must, and not on those it must not (promtool test rules)', () => {
    expect(alertsWithoutFiringScenario()).toEqual([]);
    const tests = path.join(dir, 'rules.test.yaml');
    writeFileSync(tests, ruleTestsFile(path.join(MONITORING, 'prometheus-rules.yaml')));
    expect(promtool(['test', 'rules', tests])).toMatch(/SUCCESS/);
  });

  it('renders the durations it is given (the integration test runs a variant in seconds)', () => {
    const groups = ruleGroups({ for: '3s', clusterUnreachableFor: '7s' });
    const rules = groups.flatMap((g) => g.rules);
    expect(rules.find((r) => r.alert === 'CapiDnsClusterUnreachable')?.for).toBe('7s');
    expect(rules.filter((r) => r.alert !== 'CapiDnsClusterUnreachable').every((r) => r.for === '3s')).toBe(
      true,
    );
  });

  it('has a PrometheusRule per side with its group of the rules file, valid for the monitoring.coreos.com/v1 CRD', () => {
    const plain = parseAllDocuments(read('prometheus-rules.yaml'))[0]!.toJS() as {
      groups: { name: string }[];
    };
    const rules = ['prometheus-rule.yaml', 'workload/prometheus-rule.yaml'].map(
      (file) => parseAllDocuments(read(file)).map((d) => d.toJS() as Record<string, unknown>)[0]!,
    );
    expect(rules.map((r) => r.metadata)).toMatchObject([
      { name: 'capi-dns-operator', namespace: 'capi-dns-system' },
      { name: 'capi-dns-server', namespace: 'capi-dns' },
    ]);
    expect(rules.flatMap((r) => (r as { spec: { groups: unknown[] } }).spec.groups)).toEqual(plain.groups);
    // The part of the CRD's schema (prometheus-operator v0.7x) that rules files meet or miss.
    const duration =
      '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$';
    const validate = new Ajv({ allErrors: true }).compile({
      type: 'object',
      required: ['spec'],
      properties: {
        spec: {
          type: 'object',
          properties: {
            groups: {
              type: 'array',
              items: {
                type: 'object',
                required: ['name'],
                properties: {
                  name: { type: 'string', minLength: 1 },
                  interval: { type: 'string', pattern: duration },
                  rules: {
                    type: 'array',
                    items: {
                      type: 'object',
                      required: ['expr'],
                      additionalProperties: false,
                      properties: {
                        alert: { type: 'string' },
                        record: { type: 'string' },
                        expr: { type: 'string', minLength: 1 },
                        for: { type: 'string', pattern: duration },
                        keep_firing_for: { type: 'string', pattern: duration },
                        labels: { type: 'object', additionalProperties: { type: 'string' } },
                        annotations: { type: 'object', additionalProperties: { type: 'string' } },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    });
    for (const rule of rules) {
      expect(rule).toMatchObject({ apiVersion: 'monitoring.coreos.com/v1', kind: 'PrometheusRule' });
      expect(validate(rule) ? [] : validate.errors).toEqual([]);
    }
  });

  it('has dashboards whose queries are valid PromQL, as JSON and as ConfigMaps for the Grafana sidecar', () => {
    const boards = dashboards();
    const recording = {
      groups: boards.map((d) => ({
        name: d.uid,
        rules: d.panels.flatMap((p, i) =>
          p.queries.map((q, j) => ({
            record: `${d.uid.replaceAll('-', '_')}:panel${i}:query${j}`,
            expr: q.expr.replaceAll('$__rate_interval', '5m'),
          })),
        ),
      })),
    };
    const file = path.join(dir, 'dashboard-queries.yaml');
    writeFileSync(file, stringify(recording));
    expect(promtool(['check', 'rules', file])).toMatch(/SUCCESS/);
    const configMaps = parseAllDocuments(read('dashboards.yaml')).map(
      (d) => d.toJS() as { metadata: { labels: Record<string, string> }; data: Record<string, string> },
    );
    expect(configMaps).toHaveLength(boards.length);
    for (const [i, d] of boards.entries()) {
      const json = read(`dashboards/${d.file}`);
      expect(JSON.parse(json)).toEqual(grafanaJson(d));
      expect(configMaps[i]!.metadata.labels.grafana_dashboard).toBe('1');
      expect(JSON.parse(configMaps[i]!.data[d.file]!)).toEqual(grafanaJson(d));
    }
  });
});

describe('docs/operating.md', () => {
  const doc = readFileSync(path.join(ROOT, 'docs', 'operating.md'), 'utf8');

  it('has a runbook line under a heading of each alert (the anchor its runbook_url names)', () => {
    for (const rule of ruleGroups().flatMap((g) => g.rules)) {
      expect(doc).toContain(`#### ${rule.alert}\n`);
      expect(rule.annotations.runbook_url.endsWith(`#${rule.alert.toLowerCase()}`)).toBe(true);
    }
  });
});
