// charts/capi-dns: in step with config/ (it is generated from it), `helm lint`,
// the same objects as `kubectl kustomize` of config/ with default values, and
// `helm template` with default and other values accepted by the real API
// servers of the test environment (`kubectl apply --dry-run=server`): the
// management side on the management cluster, the workload side on a workload
// cluster, the ClusterResourceSet release in a Clusters' namespace. Installing
// it on clusters with nodes is test/e2e/helm-chart.test.ts.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments, stringify } from 'yaml';
import { chartDifferences, renderChart } from '../../scripts/helm-chart/render.js';
import { ensureNamespace } from '../support/capi.js';
import { testEnvInfo } from '../support/environment.js';
import { CHART, Helm } from '../support/helm.js';
import { binPath, repoRoot } from '../support/paths.js';
import { clusterOf, kubeConfigOf } from '../support/testenv.js';

const run = promisify(execFile);
const info = testEnvInfo();
const root = repoRoot();
const MANAGEMENT = 'management';
const WORKLOAD = 'cluster-b';
const HELM_LABELS = [
  'helm.sh/chart',
  'app.kubernetes.io/managed-by',
  'app.kubernetes.io/instance',
  'app.kubernetes.io/version',
];

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  data?: Record<string, string>;
  spec?: Record<string, unknown>;
}

const parse = (text: string): Manifest[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Manifest | null)
    .filter((o): o is Manifest => o !== null);
const id = (o: Manifest) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const byId = (objects: Manifest[]) => [...objects].sort((a, b) => id(a).localeCompare(id(b)));

/** The object without Helm's labels, which the chart adds and config/ has not (on its pods: the instance). */
function withoutHelmLabels(o: Manifest): Manifest {
  const without = (labels: Record<string, string> = {}) =>
    Object.fromEntries(Object.entries(labels).filter(([k]) => !HELM_LABELS.includes(k)));
  const out = structuredClone({ ...o, metadata: { ...o.metadata, labels: without(o.metadata.labels) } });
  const pod = (out.spec as { template?: { metadata?: { labels?: Record<string, string> } } } | undefined)
    ?.template?.metadata;
  if (pod?.labels) pod.labels = without(pod.labels);
  return out;
}

async function kustomize(dir: string): Promise<Manifest[]> {
  const { stdout } = await run(binPath('kubectl'), ['kustomize', dir], { cwd: root, maxBuffer: 64 << 20 });
  return parse(stdout);
}

/** `kubectl apply --dry-run=server -o json` of a rendered stream: the objects as the API server would store them. */
async function dryRun(cluster: string, text: string): Promise<Manifest[]> {
  const file = path.join(dir, `dry-run-${cluster}.yaml`);
  writeFileSync(file, text);
  try {
    const { stdout } = await run(
      binPath('kubectl'),
      [
        '--kubeconfig',
        clusterOf(info, cluster).kubeconfig,
        'apply',
        '--dry-run=server',
        '-o',
        'json',
        '-f',
        file,
      ],
      { cwd: root, maxBuffer: 64 << 20 },
    );
    const out = JSON.parse(stdout) as Manifest & { items?: Manifest[] };
    return out.items ?? [out];
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`kubectl apply --dry-run=server on ${cluster}: ${e.stderr?.trim() || e.message}`);
  }
}

const find = (objects: Manifest[], kind: string, name: string): Manifest => {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`no ${kind} ${name} among ${objects.map(id).join(', ')}`);
  return o;
};

interface PodSpecLike {
  replicas: number;
  template: {
    metadata: { annotations?: Record<string, string>; labels?: Record<string, string> };
    spec: Record<string, unknown> & {
      containers: { image: string; imagePullPolicy?: string; args: string[]; resources: unknown }[];
    };
  };
}
const deploymentSpec = (o: Manifest) => o.spec as unknown as PodSpecLike;

let dir: string;
let helm: Helm;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-helm-chart-'));
  helm = new Helm(path.join(dir, 'helm'));
  await ensureNamespace(kubeConfigOf(info, MANAGEMENT), 'capi-dns-system');
  await ensureNamespace(kubeConfigOf(info, MANAGEMENT), 'dev-team');
  await ensureNamespace(kubeConfigOf(info, MANAGEMENT), 'team-a');
  await ensureNamespace(kubeConfigOf(info, WORKLOAD), 'capi-dns');
  await ensureNamespace(kubeConfigOf(info, WORKLOAD), 'dns-records');
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const valuesFile = (name: string, values: object): string => {
  const file = path.join(dir, `${name}.yaml`);
  // YAML 1.1, as Helm reads values: a string like "yes" stays one.
  writeFileSync(file, stringify(values, { version: '1.1' }));
  return file;
};

describe('charts/capi-dns', () => {
  it('is what config/ renders to (generated: npm run generate:helm-chart)', () => {
    expect(chartDifferences(root, renderChart(root, binPath('kubectl')))).toEqual([]);
  });

  it.each([
    ['default values', []],
    ['the workload side directly', ['-n', 'capi-dns', '--set', 'dnsServer.enabled=true']],
    ['the ClusterResourceSet', ['-n', 'dev-team', '--set', 'clusterResourceSet.enabled=true']],
  ])('passes helm lint --strict with %s', async (_what, flags) => {
    expect(await helm.run(['lint', '--strict', CHART, ...flags])).toContain('0 chart(s) failed');
  });

  it("has config/monitoring's objects, both sides, each kind behind its value (default off)", async () => {
    const monitoringKinds = new Set(['PodMonitor', 'PrometheusRule']);
    const rendered = async (flags: string[]) =>
      parse(await helm.template('x', flags)).filter(
        (o) => monitoringKinds.has(o.kind) || o.metadata.labels?.grafana_dashboard !== undefined,
      );
    const all = [
      '--set',
      'monitoring.prometheusRule.enabled=true',
      '--set',
      'monitoring.podMonitors.enabled=true',
      '--set',
      'monitoring.dashboards.enabled=true',
    ];
    expect(await rendered(['-n', 'capi-dns-system'])).toEqual([]);
    expect((await rendered(['-n', 'capi-dns-system', ...all])).map(id).sort()).toEqual([
      'ConfigMap/capi-dns-system/capi-dns-operator-dashboard',
      'ConfigMap/capi-dns-system/capi-dns-server-dashboard',
      'PodMonitor/capi-dns-system/capi-dns-controller',
      'PrometheusRule/capi-dns-system/capi-dns-operator',
    ]);
    const direct = ['-n', 'capi-dns', '--set', 'operator.enabled=false', '--set', 'dnsServer.enabled=true'];
    expect((await rendered([...direct, ...all])).map(id).sort()).toEqual([
      'PodMonitor/capi-dns/capi-dns-server',
      'PrometheusRule/capi-dns/capi-dns-server',
    ]);
    const crs = parse(
      await helm.template('x', [
        '-n',
        'dev-team',
        '--set',
        'operator.enabled=false',
        '--set',
        'clusterResourceSet.enabled=true',
        ...all,
      ]),
    );
    expect(parse(crs[1]!.data!['objects.yaml']!).map(id)).toEqual(
      expect.arrayContaining([
        'PodMonitor/capi-dns/capi-dns-server',
        'PrometheusRule/capi-dns/capi-dns-server',
      ]),
    );
  });

  /** Whether a label selector (matchLabels, matchExpressions) selects these labels. */
  const selects = (
    selector: {
      matchLabels?: Record<string, string>;
      matchExpressions?: { key: string; operator: string; values?: string[] }[];
    },
    labels: Record<string, string> = {},
  ) =>
    Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v) &&
    (selector.matchExpressions ?? []).every((e) =>
      e.operator === 'In'
        ? e.values!.includes(labels[e.key]!)
        : e.operator === 'NotIn'
          ? !e.values!.includes(labels[e.key]!)
          : e.operator === 'Exists'
            ? e.key in labels
            : !(e.key in labels),
    );

  it("is picked up by kube-prometheus-stack's default selectors with monitoring.labels", async () => {
    // kube-prometheus-stack (release kps, in monitoring) with its defaults: the Prometheus selects
    // PodMonitors and PrometheusRules by `release: kps` in every namespace, and its Grafana sidecar
    // dashboard ConfigMaps by `grafana_dashboard: "1"` in the namespaces it watches.
    const kps = { matchLabels: { release: 'kps' } };
    const sidecar = { matchLabels: { grafana_dashboard: '1' } };
    const values = valuesFile('kps', {
      monitoring: {
        labels: { release: 'kps' },
        prometheusRule: {
          enabled: true,
          runbookBaseUrl: 'https://git.example.com/capi-dns/docs/operating.md/',
        },
        podMonitors: {
          enabled: true,
          interval: '30s',
          relabelings: [{ targetLabel: 'cluster', replacement: 'a' }],
        },
        dashboards: { enabled: true, namespace: 'monitoring', folder: 'capi-dns' },
      },
      dnsServer: {
        networkPolicy: {
          metricsFrom: [
            { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
          ],
        },
      },
    });
    for (const flags of [
      ['-n', 'capi-dns-system'],
      ['-n', 'capi-dns', '--set', 'operator.enabled=false', '--set', 'dnsServer.enabled=true'],
    ]) {
      const objects = parse(await helm.template('capi-dns', [...flags, '-f', values]));
      const pods = objects.filter((o) => o.kind === 'Deployment');
      const podMonitors = objects.filter((o) => o.kind === 'PodMonitor');
      const rules = objects.filter((o) => o.kind === 'PrometheusRule');
      expect(podMonitors).toHaveLength(1);
      expect(rules).toHaveLength(1);
      for (const o of [...podMonitors, ...rules]) expect(selects(kps, o.metadata.labels)).toBe(true);
      // The PodMonitor selects its component's pods, in its own namespace, on a port they have.
      const monitor = podMonitors[0]!.spec as {
        selector: Parameters<typeof selects>[0];
        podMetricsEndpoints: { port: string; interval: string; relabelings: object[] }[];
      };
      const pod = pods.find((d) => selects(monitor.selector, deploymentSpec(d).template.metadata.labels));
      expect(pod?.metadata.namespace).toBe(podMonitors[0]!.metadata.namespace);
      expect(JSON.stringify(deploymentSpec(pod!).template.spec.containers[0])).toContain(
        `"name":"${monitor.podMetricsEndpoints[0]!.port}"`,
      );
      expect(monitor.podMetricsEndpoints[0]).toMatchObject({
        interval: '30s',
        relabelings: [
          { targetLabel: 'job', action: 'replace' },
          { targetLabel: 'cluster', replacement: 'a' },
        ],
      });
      const alert = (rules[0]!.spec as { groups: { rules: { annotations: { runbook_url: string } }[] }[] })
        .groups[0]!.rules[0]!;
      expect(alert.annotations.runbook_url).toMatch(
        /^https:\/\/git\.example\.com\/capi-dns\/docs\/operating\.md#capidns/,
      );
      const dashboards = objects.filter((o) => o.kind === 'ConfigMap');
      if (flags[1] === 'capi-dns-system') {
        expect(dashboards).toHaveLength(2);
        for (const d of dashboards) {
          expect(selects(sidecar, d.metadata.labels)).toBe(true);
          expect(d.metadata).toMatchObject({
            namespace: 'monitoring',
            annotations: { grafana_folder: 'capi-dns' },
          });
        }
      } else {
        const policy = find(objects, 'NetworkPolicy', 'capi-dns-server').spec as {
          ingress: { from: object[]; ports: { port: number }[] }[];
        };
        const metrics = policy.ingress.find((r) => r.ports.some((p) => p.port === 8080));
        expect(metrics?.from).toEqual([
          { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
        ]);
      }
    }
  });

  it('refuses through values.schema.json a value of the wrong type and a key it does not have', async () => {
    await expect(helm.template('x', ['--set', 'operator.replicas=three'])).rejects.toThrow(/replicas/);
    await expect(helm.template('x', ['--set', 'operator.replica=3'])).rejects.toThrow(/replica/);
    await expect(helm.template('x', ['--set', 'monitoring.label.release=kps'])).rejects.toThrow(/label/);
  });

  it('refuses the workload side outside recordsNamespace, with how to install it', async () => {
    await expect(helm.template('x', ['-n', 'default', '--set', 'dnsServer.enabled=true'])).rejects.toThrow(
      /recordsNamespace "capi-dns" \(helm install -n capi-dns --create-namespace\), not "default"/,
    );
  });
});

describe('charts/capi-dns with default values is config/ (plus Helm labels)', () => {
  it('the management side: config/default without its Namespace (Helm creates the release namespace) and CRDs (crds/)', async () => {
    const chart = parse(await helm.template('capi-dns', ['-n', 'capi-dns-system']));
    const config = (await kustomize('config/default')).filter(
      (o) => o.kind !== 'Namespace' && o.kind !== 'CustomResourceDefinition',
    );
    for (const o of chart)
      expect(o.metadata.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'Helm' });
    expect(byId(chart.map(withoutHelmLabels))).toEqual(byId(config));
  });

  it('the workload side installed directly: config/workload without its Namespace and CRDs', async () => {
    const chart = parse(
      await helm.template('capi-dns-server', [
        '-n',
        'capi-dns',
        '--set',
        'operator.enabled=false',
        '--set',
        'dnsServer.enabled=true',
        // helm test's pod is the chart's own, not config/'s.
        '--skip-tests',
      ]),
    );
    const config = (await kustomize('config/workload')).filter(
      (o) => o.kind !== 'Namespace' && o.kind !== 'CustomResourceDefinition',
    );
    expect(byId(chart.map(withoutHelmLabels))).toEqual(byId(config));
  });

  it("the ClusterResourceSet: config/clusterresourceset's objects, in its order", async () => {
    const chart = parse(
      await helm.template('capi-dns-workload', [
        '-n',
        'dev-team',
        '--set',
        'operator.enabled=false',
        '--set',
        'clusterResourceSet.enabled=true',
      ]),
    );
    const config = parse(
      readFileSync(path.join(root, 'config/clusterresourceset/clusterresourceset.yaml'), 'utf8'),
    );
    expect(chart.map((o) => [o.kind, o.metadata.name, o.metadata.namespace])).toEqual(
      config.map((o) => [o.kind, o.metadata.name, 'dev-team']),
    );
    for (const [i, o] of chart.entries()) {
      if (o.kind === 'ConfigMap')
        expect(parse(o.data!['objects.yaml']!)).toEqual(parse(config[i]!.data!['objects.yaml']!));
      else expect(o.spec).toEqual(config[i]!.spec);
    }
  });
});

describe('helm template accepted by the API servers (server-side dry run)', () => {
  it('the management side with default values, CRDs included', async () => {
    const text = await helm.template('capi-dns', ['-n', 'capi-dns-system', '--include-crds']);
    const objects = await dryRun(MANAGEMENT, text);
    expect(objects.map(id).sort()).toEqual(
      [
        'ClusterRole//capi-dns-admin',
        'ClusterRole//capi-dns-controller',
        'ClusterRole//capi-dns-controller-dnszones',
        'ClusterRole//capi-dns-controller-kubeconfig-reader',
        'ClusterRole//capi-dns-gatewaydns-editor',
        'ClusterRole//capi-dns-gatewaydns-viewer',
        'ClusterRoleBinding//capi-dns-controller',
        'ClusterRoleBinding//capi-dns-controller-dnszones',
        'ClusterRoleBinding//capi-dns-controller-kubeconfig-reader',
        'CustomResourceDefinition//clusterprofiles.multicluster.x-k8s.io',
        'CustomResourceDefinition//clusterproperties.about.k8s.io',
        'CustomResourceDefinition//dnsrecordsets.connectivity.tanzu.vmware.com',
        'CustomResourceDefinition//dnszones.connectivity.tanzu.vmware.com',
        'CustomResourceDefinition//gatewaydns.connectivity.tanzu.vmware.com',
        'CustomResourceDefinition//serviceexports.multicluster.x-k8s.io',
        'CustomResourceDefinition//serviceimports.multicluster.x-k8s.io',
        'Deployment/capi-dns-system/capi-dns-controller',
        'PodDisruptionBudget/capi-dns-system/capi-dns-controller',
        'Role/capi-dns-system/capi-dns-controller-leader-election',
        'RoleBinding/capi-dns-system/capi-dns-controller-leader-election',
        'ServiceAccount/capi-dns-system/capi-dns-controller',
      ].sort(),
    );
    const spec = deploymentSpec(find(objects, 'Deployment', 'capi-dns-controller'));
    expect(spec.replicas).toBe(3);
    expect(spec.template.spec.containers[0]!.image).toBe('ghcr.io/capi-dns/capi-dns-controller:0.1.0');
  });

  it('the management side with other values: every value where it belongs', async () => {
    const values = valuesFile('management', {
      zone: 'example.org',
      recordsNamespace: 'dns-records',
      operator: {
        image: { repository: 'registry.example.com/capi-dns/controller', tag: '9.9.9', pullPolicy: 'Always' },
        imagePullSecrets: [{ name: 'registry' }],
        replicas: 1,
        shards: 4,
        watchNamespace: 'team-a',
        extraArgs: ['--log-level=debug'],
        // Helm merges a map with the default's; null removes a key of it.
        resources: { requests: { cpu: '10m', memory: '64Mi' }, limits: { cpu: null, memory: '256Mi' } },
        podAnnotations: { 'example.com/scrape': 'true' },
        nodeSelector: { 'kubernetes.io/os': 'linux' },
        tolerations: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }],
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              {
                weight: 1,
                preference: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['mgmt'] }] },
              },
            ],
          },
        },
      },
    });
    const objects = await dryRun(
      MANAGEMENT,
      await helm.template('capi-dns', ['-n', 'capi-dns-system', '-f', values]),
    );
    const spec = deploymentSpec(find(objects, 'Deployment', 'capi-dns-controller'));
    const pod = spec.template.spec;
    const container = pod.containers[0]!;
    expect(spec.replicas).toBe(1);
    expect(container.image).toBe('registry.example.com/capi-dns/controller:9.9.9');
    expect(container.imagePullPolicy).toBe('Always');
    expect(container.args).toEqual([
      '--domain-suffix=example.org',
      '--records-namespace=dns-records',
      '--health-listen=:8081',
      '--shards=4',
      '--leader-election-namespace=$(POD_NAMESPACE)',
      '--identity=$(POD_NAME)',
      '--namespace=team-a',
      '--log-level=debug',
    ]);
    expect(container.resources).toEqual({
      requests: { cpu: '10m', memory: '64Mi' },
      limits: { memory: '256Mi' },
    });
    expect(spec.template.metadata.annotations).toEqual({ 'example.com/scrape': 'true' });
    expect(pod).toMatchObject({
      imagePullSecrets: [{ name: 'registry' }],
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      tolerations: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }],
    });
    expect(pod.affinity).toBeDefined();
    // watchNamespace: RoleBindings in that namespace to the same ClusterRoles; the one ClusterRoleBinding
    // left is the DNSZones' (cluster-scoped, read cluster-wide in either mode: ADR 0213).
    expect(objects.filter((o) => o.kind === 'ClusterRoleBinding').map(id)).toEqual([
      'ClusterRoleBinding//capi-dns-controller-dnszones',
    ]);
    expect(
      objects
        .filter((o) => o.kind === 'RoleBinding')
        .map(id)
        .sort(),
    ).toEqual([
      'RoleBinding/capi-dns-system/capi-dns-controller-leader-election',
      'RoleBinding/team-a/capi-dns-controller',
      'RoleBinding/team-a/capi-dns-controller-kubeconfig-reader',
    ]);
  });

  it('the workload side installed directly, with default and with other values', async () => {
    const direct = ['--set', 'operator.enabled=false', '--set', 'dnsServer.enabled=true', '--skip-tests'];
    const defaults = await dryRun(
      WORKLOAD,
      await helm.template('capi-dns-server', ['-n', 'capi-dns', ...direct]),
    );
    expect(defaults.map(id).sort()).toEqual(
      [
        'ClusterRole//capi-dns-server-clusterset',
        'ClusterRoleBinding//capi-dns-server-clusterset',
        'Deployment/capi-dns/capi-dns-server',
        'NetworkPolicy/capi-dns/capi-dns-server',
        'PodDisruptionBudget/capi-dns/capi-dns-server',
        'ResourceQuota/capi-dns/capi-dns-critical-pods',
        'Role/capi-dns/capi-dns-server',
        'RoleBinding/capi-dns/capi-dns-server',
        'Service/capi-dns/capi-dns-server',
        'ServiceAccount/capi-dns/capi-dns-server',
      ].sort(),
    );
    const values = valuesFile('workload', {
      zone: 'example.org',
      recordsNamespace: 'dns-records',
      dnsServer: {
        image: { tag: '9.9.9' },
        replicas: 3,
        buildHeapLimit: '256Mi',
        extraArgs: ['--log-level=debug'],
        resources: { limits: { memory: '768Mi' } },
        topologySpreadConstraints: [],
        podDisruptionBudget: { minAvailable: 2 },
      },
    });
    const objects = await dryRun(
      WORKLOAD,
      await helm.template('capi-dns-server', ['-n', 'dns-records', ...direct, '-f', values]),
    );
    expect(objects.every((o) => !o.metadata.namespace || o.metadata.namespace === 'dns-records')).toBe(true);
    const spec = deploymentSpec(find(objects, 'Deployment', 'capi-dns-server'));
    const container = spec.template.spec.containers[0]!;
    expect(spec.replicas).toBe(3);
    expect(container.image).toBe('ghcr.io/capi-dns/dns-server:9.9.9');
    expect(container.args).toEqual(
      expect.arrayContaining([
        '--zone=example.org',
        '--namespace=dns-records',
        '--build-heap-limit=256Mi',
        '--log-level=debug',
      ]),
    );
    expect(container.resources).toEqual({
      requests: { cpu: '100m', memory: '64Mi' },
      limits: { cpu: '1', memory: '768Mi' },
    });
    expect(spec.template.spec.topologySpreadConstraints).toBeUndefined();
    expect(find(objects, 'PodDisruptionBudget', 'capi-dns-server').spec).toMatchObject({ minAvailable: 2 });
    expect(find(objects, 'ClusterRoleBinding', 'capi-dns-server-clusterset')).toMatchObject({
      subjects: [{ kind: 'ServiceAccount', name: 'capi-dns-server', namespace: 'dns-records' }],
    });
  });

  it('the exposed dns-server (dnsServer.expose.enabled, off by default), with the annotations a cloud load balancer needs, direct and in the ClusterResourceSet', async () => {
    const direct = ['--set', 'operator.enabled=false', '--set', 'dnsServer.enabled=true', '--skip-tests'];
    const exposed = (objects: Manifest[]) =>
      objects.filter((o) => o.metadata.name === 'capi-dns-server-external').map(id);
    expect(exposed(parse(await helm.template('x', ['-n', 'capi-dns', ...direct])))).toEqual([]);
    const values = valuesFile('exposed', {
      dnsServer: {
        expose: {
          enabled: true,
          annotations: { 'service.beta.kubernetes.io/aws-load-balancer-type': 'nlb' },
        },
      },
    });
    const objects = await dryRun(
      WORKLOAD,
      await helm.template('x', ['-n', 'capi-dns', ...direct, '-f', values]),
    );
    expect(exposed(objects).sort()).toEqual([
      'NetworkPolicy/capi-dns/capi-dns-server-external',
      'Service/capi-dns/capi-dns-server-external',
    ]);
    const service = find(objects, 'Service', 'capi-dns-server-external');
    expect(service.metadata.annotations).toMatchObject({
      'service.beta.kubernetes.io/aws-load-balancer-type': 'nlb',
    });
    expect(service.spec).toMatchObject({ type: 'LoadBalancer', externalTrafficPolicy: 'Local' });
    expect(find(objects, 'NetworkPolicy', 'capi-dns-server-external').spec).toMatchObject({
      ingress: [{ from: [{ ipBlock: { cidr: '0.0.0.0/0' } }, { ipBlock: { cidr: '::/0' } }] }],
    });
    const crs = parse(
      await helm.template('x', [
        '-n',
        'dev-team',
        '--set',
        'operator.enabled=false',
        '--set',
        'clusterResourceSet.enabled=true',
        '-f',
        values,
      ]),
    );
    expect(parse(crs[1]!.data!['objects.yaml']!).map(id)).toEqual(
      expect.arrayContaining(['Service/capi-dns/capi-dns-server-external']),
    );
  });

  it('the ClusterResourceSet release in a Clusters namespace, its ConfigMaps carrying the values', async () => {
    const values = valuesFile('crs', {
      recordsNamespace: 'dns-records',
      operator: { enabled: false },
      dnsServer: { replicas: 1 },
      clusterResourceSet: { enabled: true, clusterSelector: { matchLabels: { 'example.com/dns': 'yes' } } },
    });
    const objects = await dryRun(
      MANAGEMENT,
      await helm.template('capi-dns-workload', ['-n', 'dev-team', '-f', values]),
    );
    expect(objects.map(id)).toEqual([
      'ConfigMap/dev-team/capi-dns-workload-cluster',
      'ConfigMap/dev-team/capi-dns-workload-namespaced',
      'ClusterResourceSet/dev-team/capi-dns-workload',
    ]);
    expect(objects[2]!.spec).toMatchObject({
      clusterSelector: { matchLabels: { 'example.com/dns': 'yes' } },
    });
    const inside = parse(objects[0]!.data!['objects.yaml']!).concat(
      parse(objects[1]!.data!['objects.yaml']!),
    );
    expect(inside[0]).toMatchObject({ kind: 'Namespace', metadata: { name: 'dns-records' } });
    expect(deploymentSpec(find(inside, 'Deployment', 'capi-dns-server')).replicas).toBe(1);
    // Cluster API creates these, not Helm: they carry no Helm labels.
    for (const o of inside) expect(o.metadata.labels?.['app.kubernetes.io/managed-by']).toBeUndefined();
    // What Cluster API would apply in a workload cluster, accepted there (the namespace exists already).
    const workloadText = inside
      .filter((o) => o.kind !== 'Namespace')
      .map((o) => stringify(o))
      .join('---\n');
    expect((await dryRun(WORKLOAD, workloadText)).length).toBe(inside.length - 1);
  });
});

describe('installed on the management API server', () => {
  // Two operator releases, one per team namespace (config/README.md's recipe), side by side: real
  // objects, Helm's ownership checks (no nodes: the pods stay Pending, which Helm does not wait for).
  const RELEASES = [
    { release: 'capi-dns-team-a', namespace: 'team-a-dns', watch: 'team-a' },
    { release: 'capi-dns-team-b', namespace: 'team-b-dns', watch: 'team-b' },
  ];
  const kubeconfig = () => clusterOf(info, MANAGEMENT).kubeconfig;
  const installer = () => new Helm(path.join(dir, 'helm-install'), kubeconfig());
  const kubectl = async (args: string[]) =>
    (await run(binPath('kubectl'), ['--kubeconfig', kubeconfig(), ...args], { cwd: root })).stdout;

  afterAll(async () => {
    for (const { release, namespace } of RELEASES)
      await installer()
        .run(['uninstall', release, '-n', namespace, '--ignore-not-found'])
        .catch((err: Error) => process.stderr.write(`cleanup: ${err.message}\n`));
  });

  it('a second operator release with another watchNamespace beside the first', async () => {
    for (const { release, namespace, watch } of RELEASES) {
      await ensureNamespace(kubeConfigOf(info, MANAGEMENT), namespace);
      await ensureNamespace(kubeConfigOf(info, MANAGEMENT), watch);
      await installer().run([
        'install',
        release,
        CHART,
        '-n',
        namespace,
        '--set',
        `operator.watchNamespace=${watch}`,
      ]);
    }
    for (const { release, namespace, watch } of RELEASES) {
      // Each release's own ClusterRoles, and a RoleBinding to them in its team namespace only.
      const role = JSON.parse(
        await kubectl(['get', 'clusterrole', `${release}-controller`, '-o', 'json']),
      ) as Manifest & { metadata: { annotations: Record<string, string> } };
      expect(role.metadata.annotations).toMatchObject({
        'meta.helm.sh/release-name': release,
        'meta.helm.sh/release-namespace': namespace,
      });
      const binding = JSON.parse(
        await kubectl(['-n', watch, 'get', 'rolebinding', `${release}-controller`, '-o', 'json']),
      ) as { roleRef: { name: string }; subjects: { name: string; namespace: string }[] };
      expect(binding.roleRef.name).toBe(`${release}-controller`);
      expect(binding.subjects).toEqual([expect.objectContaining({ name: 'capi-dns-controller', namespace })]);
      const canList = async (ns: string) =>
        run(binPath('kubectl'), [
          '--kubeconfig',
          kubeconfig(),
          'auth',
          'can-i',
          'list',
          'secrets',
          '-n',
          ns,
          '--as',
          `system:serviceaccount:${namespace}:capi-dns-controller`,
        ]).then(
          () => true,
          () => false,
        );
      expect(await canList(watch)).toBe(true);
      const other = RELEASES.find((r) => r.release !== release)!.watch;
      expect(await canList(other)).toBe(false);
    }
  });

  it("the CRD upgrade step of the chart's README over an installed release: kubectl apply --server-side", async () => {
    const out = await kubectl([
      'apply',
      '--server-side',
      '--force-conflicts',
      '-f',
      path.join(root, CHART, 'crds'),
    ]);
    expect(out).toContain(
      'customresourcedefinition.apiextensions.k8s.io/gatewaydns.connectivity.tanzu.vmware.com serverside-applied',
    );
    // The release upgrades afterwards as before.
    await installer().run([
      'upgrade',
      RELEASES[0]!.release,
      CHART,
      '-n',
      RELEASES[0]!.namespace,
      '--reuse-values',
    ]);
  });
});
