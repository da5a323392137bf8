// Pure: charts/capi-dns from config/ as kustomize renders it. The management
// side (config/default) becomes templates in the release namespace, the
// workload side (config/workload) named templates that the chart writes
// either as objects (a direct install, dnsServer.enabled) or into the
// ConfigMaps of a ClusterResourceSet (clusterResourceSet.enabled), the CRDs
// files of crds/ (Helm installs them first and never deletes them). Only the
// fields scope.ts names become values, with config/'s settings as defaults;
// every other field is config/'s as it is, so chart and config/ cannot drift.
import { stringify } from 'yaml';
import { FIRST_KINDS, WORKLOAD_LABEL, WORKLOAD_LABEL_VALUE } from '../clusterresourceset/generate.js';
import {
  chartYaml,
  clusterResourceSetTemplate,
  DNS_SERVER_TEMPLATE,
  DNS_SERVER_TEST_TEMPLATE,
  GENERATED,
  GENERATED_TEMPLATE,
} from './fixed.js';
import { OPERATOR_NAMESPACE, RECORDS_NAMESPACE, Scope, type Manifest } from './scope.js';
import { Values } from './values.js';

export type { Manifest } from './scope.js';

/**
 * Optional directories of config/: rendered when they exist, each kind behind its own value
 * (default off). A kind not listed fails generation rather than landing in the chart unasked.
 * An object in the records namespace belongs to the workload side (a dns-server PodMonitor),
 * any other to the management side.
 */
export const OPTIONAL_DIRS: { dir: string; kinds: Record<string, string> }[] = [
  {
    dir: 'monitoring',
    kinds: {
      PrometheusRule: 'monitoring.prometheusRule.enabled',
      PodMonitor: 'monitoring.podMonitors.enabled',
      ConfigMap: 'monitoring.dashboards.enabled',
    },
  },
  // The dns-server's alerts and PodMonitor (config/monitoring's kustomization is the management side's).
  {
    dir: 'monitoring/workload',
    kinds: {
      PrometheusRule: 'monitoring.prometheusRule.enabled',
      PodMonitor: 'monitoring.podMonitors.enabled',
    },
  },
  // The dns-server reachable from outside (ADR 0215): its LoadBalancer Service and NetworkPolicy.
  {
    dir: 'dns-server-exposed',
    kinds: { Service: 'dnsServer.expose.enabled', NetworkPolicy: 'dnsServer.expose.enabled' },
  },
];

export interface ChartInput {
  /** config/default rendered. */
  management: Manifest[];
  /** config/workload rendered. */
  workload: Manifest[];
  /** Each existing OPTIONAL_DIRS entry rendered, by dir. */
  optional: Record<string, Manifest[]>;
  /** The chart's version (package.json's). */
  version: string;
}

export interface Chart {
  /** Every generated file, by path under charts/capi-dns. */
  files: Map<string, string>;
  /** The values table of charts/capi-dns/README.md (between its markers). */
  valuesTable: string;
}

export function chart(input: ChartInput): Chart {
  const files = new Map<string, string>();
  const values = new Values();
  const images = new Set<string>();
  const gated = new Map<string, { gate: string; object: Manifest; workload: boolean }>();
  const optionalKinds = new Map(OPTIONAL_DIRS.flatMap((d) => Object.entries(d.kinds)));
  for (const [dir, objects] of Object.entries(input.optional))
    for (const o of objects) {
      const gate = optionalKinds.get(o.kind);
      if (!gate)
        throw new Error(
          `config/${dir} has a ${o.kind} (${o.metadata.name}), which scripts/helm-chart/chart.ts OPTIONAL_DIRS does not list`,
        );
      gated.set(objectId(o), { gate, object: o, workload: o.metadata.namespace === RECORDS_NAMESPACE });
    }
  // config/default or config/workload may come to include an optional directory: its objects stay behind their value.
  const ungated = (objects: Manifest[]) => objects.filter((o) => !gated.has(objectId(o)));

  const crds: Manifest[] = [];
  const workloadCrds: string[] = [];
  for (const o of [...input.management, ...input.workload])
    if (o.kind === 'CustomResourceDefinition' && !crds.some((c) => c.metadata.name === o.metadata.name))
      crds.push(o);
  for (const crd of crds)
    files.set(
      `crds/${crd.metadata.name}.yaml`,
      GENERATED('config/crd') + stringify(crd, { version: '1.1', lineWidth: 0 }),
    );
  for (const o of input.workload)
    if (o.kind === 'CustomResourceDefinition') workloadCrds.push(`crds/${o.metadata.name}.yaml`);

  // The management side.
  const top = new Scope('$', values, images);
  for (const o of ungated(input.management)) {
    if (o.kind === 'CustomResourceDefinition') continue;
    // The release namespace is Helm's to create (--create-namespace), not the chart's.
    if (o.kind === 'Namespace' && o.metadata.name === OPERATOR_NAMESPACE) continue;
    files.set(
      `templates/operator/${fileName(o)}`,
      GENERATED_TEMPLATE('config/default') +
        `{{- if $.Values.operator.enabled }}\n${top.operatorObject(o)}{{- end }}\n`,
    );
  }

  // The workload side, as named templates (in _workload.tpl) taking (dict "root" $ "helmLabels" bool).
  const inside = new Scope('$.root', values, images, '$.helmLabels');
  const workload = ungated(input.workload).filter((o) => o.kind !== 'CustomResourceDefinition');
  const namespace = workload.filter((o) => o.kind === 'Namespace');
  const cluster = workload.filter((o) => o.kind !== 'Namespace' && FIRST_KINDS.has(o.kind));
  const namespaced = workload.filter((o) => !FIRST_KINDS.has(o.kind));
  // Optional objects of the workload side follow, each with its separator inside its condition.
  const optional = [...gated.values()].filter((g) => g.workload);
  const define = (name: string, objects: Manifest[], extra: typeof optional = []) =>
    `{{- define "capi-dns.workload.${name}" -}}\n${objects.map((o) => inside.workloadObject(o)).join('---\n')}` +
    extra
      .map(
        (g) =>
          `{{- if $.root.Values.${g.gate} }}\n---\n${g.gate.startsWith('monitoring.') ? inside.monitoringObject(g.object) : inside.exposedObject(g.object)}{{- end }}\n`,
      )
      .join('') +
    '{{- end }}\n';
  files.set(
    'templates/_workload.tpl',
    GENERATED_TEMPLATE('config/workload') +
      '{{/* The workload side; each takes (dict "root" $ "helmLabels" bool). */}}\n' +
      [
        define('namespace', namespace),
        define('cluster', cluster),
        define('namespaced', namespaced, optional),
      ].join(''),
  );
  files.set('templates/dns-server.yaml', DNS_SERVER_TEMPLATE);
  files.set('templates/tests/dns-server-test.yaml', DNS_SERVER_TEST_TEMPLATE);
  files.set('templates/clusterresourceset.yaml', clusterResourceSetTemplate(workloadCrds));

  // Optional directories, each kind behind its value; the management side's with the operator.
  for (const { gate, object, workload } of gated.values()) {
    values.set(gate, false);
    if (workload) continue;
    files.set(
      `templates/${gate.split('.')[0]}/${fileName(object)}`,
      GENERATED_TEMPLATE(`config/${gate.split('.')[0]}`) +
        `{{- if and $.Values.operator.enabled $.Values.${gate} }}\n${top.monitoringObject(object)}{{- end }}\n`,
    );
  }

  values.set('nameOverride', '');
  values.set('fullnameOverride', '');
  values.set('clusterResourceSet.enabled', false);
  values.set('clusterResourceSet.clusterSelector', {
    matchLabels: { [WORKLOAD_LABEL]: WORKLOAD_LABEL_VALUE },
  });
  values.set('operator.enabled', true);
  values.set('dnsServer.enabled', false);
  if (images.size !== 1)
    throw new Error(
      `config/'s images have ${images.size} tags (${[...images].join(', ')}); the chart has one appVersion`,
    );
  const appVersion = [...images][0]!;
  files.set('Chart.yaml', chartYaml(input.version, appVersion));
  files.set(
    'values.yaml',
    values.yaml(
      GENERATED('config/') + "# The defaults are config/'s settings; see README.md for what each does.\n",
    ),
  );
  files.set('values.schema.json', values.schema());
  return { files, valuesTable: values.markdownTable() };
}

function objectId(o: Manifest): string {
  return `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

function fileName(o: Manifest): string {
  return `${o.kind.toLowerCase()}-${o.metadata.name}.yaml`;
}
