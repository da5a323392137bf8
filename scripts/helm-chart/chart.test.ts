// The generator run on the real config/ (kubectl kustomize: .cache/bin's, or
// PATH's): what it makes of config/'s own objects, not of made-up ones, so
// that an object config/ has and the chart lacks shows here.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { chart, type Manifest } from './chart.js';
import { chartInput } from './render.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const BUILT = path.join(ROOT, '.cache', 'bin', 'kubectl');
const input = chartInput(ROOT, existsSync(BUILT) ? BUILT : 'kubectl');

describe('chart of the real config/', () => {
  const { files } = chart(input);

  it('makes the CRDs files of crds/, the Namespaces Helm or a value, the rest templates', () => {
    expect([...files.keys()].filter((f) => f.startsWith('crds/')).sort()).toEqual([
      'crds/clusterprofiles.multicluster.x-k8s.io.yaml',
      'crds/clusterproperties.about.k8s.io.yaml',
      'crds/dnsrecordsets.connectivity.tanzu.vmware.com.yaml',
      'crds/dnszones.connectivity.tanzu.vmware.com.yaml',
      'crds/gatewaydns.connectivity.tanzu.vmware.com.yaml',
      'crds/serviceexports.multicluster.x-k8s.io.yaml',
      'crds/serviceimports.multicluster.x-k8s.io.yaml',
    ]);
    expect(files.get('templates/_workload.tpl')).toContain('name: {{ $.root.Values.recordsNamespace }}');
    expect(files.has('templates/operator/namespace-capi-dns-system.yaml')).toBe(false);
    expect(files.has('templates/tests/dns-server-test.yaml')).toBe(true);
    expect(files.has('values.schema.json')).toBe(true);
  });

  it('has every monitoring object of config/monitoring, both sides, each behind its value', () => {
    const monitoring = [...input.optional.monitoring!, ...input.optional['monitoring/workload']!];
    expect(monitoring.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ConfigMap/capi-dns-operator-dashboard',
      'ConfigMap/capi-dns-server-dashboard',
      'PodMonitor/capi-dns-controller',
      'PodMonitor/capi-dns-server',
      'PrometheusRule/capi-dns-operator',
      'PrometheusRule/capi-dns-server',
    ]);
    // The management side's as template files, the dns-server's (records namespace) in _workload.tpl.
    expect(files.get('templates/monitoring/prometheusrule-capi-dns-operator.yaml')).toContain(
      '{{- if and $.Values.operator.enabled $.Values.monitoring.prometheusRule.enabled }}',
    );
    const workload = files.get('templates/_workload.tpl')!;
    for (const kind of ['PodMonitor', 'PrometheusRule']) {
      const gate = kind === 'PodMonitor' ? 'podMonitors' : 'prometheusRule';
      const at = workload.indexOf(
        `{{- if $.root.Values.monitoring.${gate}.enabled }}\n---\napiVersion: monitoring.coreos.com/v1\nkind: ${kind}\n`,
      );
      expect(at).toBeGreaterThan(workload.indexOf('kind: Deployment'));
    }
    // Prometheus's {{ }} escaped, the runbooks' base a value.
    expect(workload).toContain('{{ "{{" }} $labels.instance {{ "}}" }}');
    expect(workload).toContain(
      'runbook_url: {{ printf "%s#capidnsserverdown" (trimSuffix "/" $.root.Values.monitoring.prometheusRule.runbookBaseUrl) | quote }}',
    );
  });

  it("takes the values' defaults from config/, and fails when config/ disagrees with itself", () => {
    const values = parse(files.get('values.yaml')!) as {
      zone: string;
      operator: { shards: number; replicas: number };
      dnsServer: { networkPolicy: { metricsFrom: unknown[] } };
    };
    expect(values.zone).toBe('xcc.test');
    expect(values.operator).toMatchObject({ shards: 16, replicas: 3 });
    expect(values.dnsServer.networkPolicy.metricsFrom).toEqual([
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
    ]);
    const other = structuredClone(input);
    const server = other.workload.find((o) => o.kind === 'Deployment')!;
    const container = (server.spec as { template: { spec: { containers: { args: string[] }[] } } }).template
      .spec.containers[0]!;
    container.args = container.args.map((a) => (a.startsWith('--zone=') ? '--zone=example.org' : a));
    expect(() => chart(other)).toThrow(/zone to "xcc.test" in one place and "example.org"/);
  });

  it('refuses a kind of an optional directory it does not know', () => {
    const rule = input.optional.monitoring!.find((o) => o.kind === 'PrometheusRule')!;
    const unknown: Manifest = { ...rule, kind: 'ServiceMonitor' };
    expect(() => chart({ ...input, optional: { ...input.optional, monitoring: [unknown] } })).toThrow(
      /config\/monitoring has a ServiceMonitor/,
    );
  });

  it('writes a values.schema.json that types every value and admits no other key', () => {
    const schema = JSON.parse(files.get('values.schema.json')!) as {
      additionalProperties: boolean;
      properties: Record<
        string,
        { additionalProperties?: boolean; properties?: Record<string, { type?: string }> }
      >;
    };
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.operator!.additionalProperties).toBe(false);
    expect(schema.properties.operator!.properties!.extraArgs!.type).toBe('array');
    expect(schema.properties.dnsServer!.properties!.replicas).toMatchObject({ type: 'integer', minimum: 0 });
  });
});
