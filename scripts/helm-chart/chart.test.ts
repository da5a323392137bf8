import { chart, type Manifest } from './chart.js';

const deployment = (
  name: string,
  namespace: string,
  image: string,
  args: string[],
  extra = {},
): Manifest => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace, labels: { 'app.kubernetes.io/name': name } },
  spec: {
    replicas: 2,
    template: {
      metadata: { labels: { 'app.kubernetes.io/name': name } },
      spec: { containers: [{ name: 'c', image, args, resources: { limits: { memory: '1Mi' } } }], ...extra },
    },
  },
});
const crd = (name: string): Manifest => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name },
});
const input = {
  management: [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'capi-dns-system' } },
    crd('gatewaydns.connectivity.tanzu.vmware.com'),
    deployment('capi-dns-controller', 'capi-dns-system', 'ghcr.io/x/controller:0.1.0', [
      '--domain-suffix=xcc.test',
      '--shards=16',
    ]),
  ],
  workload: [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'capi-dns' } },
    crd('dnsrecordsets.connectivity.tanzu.vmware.com'),
    deployment('capi-dns-server', 'capi-dns', 'ghcr.io/x/dns-server:0.1.0', ['--zone=xcc.test'], {
      priorityClassName: 'p',
      topologySpreadConstraints: [],
    }),
  ],
  optional: {},
  version: '1.2.3',
};

describe('chart', () => {
  it('makes the CRDs files of crds/, the Namespaces Helm or a value, the rest templates', () => {
    const { files } = chart(input);
    expect([...files.keys()].sort()).toEqual([
      'Chart.yaml',
      'crds/dnsrecordsets.connectivity.tanzu.vmware.com.yaml',
      'crds/gatewaydns.connectivity.tanzu.vmware.com.yaml',
      'templates/_workload.tpl',
      'templates/clusterresourceset.yaml',
      'templates/dns-server.yaml',
      'templates/operator/deployment-capi-dns-controller.yaml',
      'values.yaml',
    ]);
    expect(files.get('Chart.yaml')).toContain('version: 1.2.3\nappVersion: 0.1.0\n');
    expect(files.get('templates/_workload.tpl')).toContain('name: {{ $.root.Values.recordsNamespace }}');
  });

  it("takes the values' defaults from config/, and fails when config/ disagrees with itself", () => {
    const { files } = chart(input);
    expect(files.get('values.yaml')).toMatch(/\nzone: xcc.test\n/);
    expect(files.get('values.yaml')).toMatch(/ {2}shards: 16\n/);
    const other = structuredClone(input);
    (
      other.workload[2]!.spec as { template: { spec: { containers: { args: string[] }[] } } }
    ).template.spec.containers[0]!.args = ['--zone=example.org'];
    expect(() => chart(other)).toThrow(/zone to "xcc.test" in one place and "example.org"/);
  });

  it('puts an optional directory behind its values, and refuses a kind it does not know', () => {
    const rule: Manifest = {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PrometheusRule',
      metadata: { name: 'capi-dns', namespace: 'capi-dns-system' },
      spec: { groups: [{ rules: [{ annotations: { summary: '{{ $labels.pod }}' } }] }] },
    };
    const podMonitor: Manifest = {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PodMonitor',
      metadata: { name: 'capi-dns-server', namespace: 'capi-dns' },
    };
    const { files } = chart({ ...input, optional: { monitoring: [rule, podMonitor] } });
    const text = files.get('templates/monitoring/prometheusrule-capi-dns.yaml')!;
    expect(text).toContain(
      '{{- if and $.Values.operator.enabled $.Values.monitoring.prometheusRule.enabled }}',
    );
    // The records namespace's: the workload side's, after its other objects, behind its value.
    expect(files.has('templates/monitoring/podmonitor-capi-dns-server.yaml')).toBe(false);
    const workload = files.get('templates/_workload.tpl')!;
    const podMonitorAt = workload.indexOf(
      '{{- if $.root.Values.monitoring.podMonitors.enabled }}\n---\napiVersion: monitoring.coreos.com/v1\nkind: PodMonitor\n',
    );
    expect(podMonitorAt).toBeGreaterThan(workload.indexOf('kind: Deployment'));
    expect(workload.slice(podMonitorAt)).toContain('namespace: {{ $.root.Values.recordsNamespace }}');
    expect(text).toContain('namespace: {{ $.Release.Namespace }}');
    expect(text).toContain('{{ "{{" }} $labels.pod {{ "}}" }}');
    expect(files.get('values.yaml')).toMatch(/monitoring:\n {2}prometheusRule:\n.*\n {4}enabled: false/);
    expect(() =>
      chart({ ...input, optional: { monitoring: [{ ...rule, kind: 'ServiceMonitor' }] } }),
    ).toThrow(/config\/monitoring has a ServiceMonitor/);
  });
});
