// Pure: the values of config/monitoring's objects and of the dns-server's
// NetworkPolicy, what kube-prometheus-stack, external-dns and cert-manager
// users expect to set: labels its selectors need (release: <name>), scrape
// interval and timeout, relabelings, the dashboards' namespace, labels and
// folder, the runbooks' base, and who may reach the metrics port.
import { DEFAULT_RULE_OPTIONS } from '../monitoring/rules.js';
import type { Holes } from './holes.js';
import type { Manifest } from './manifest.js';
import type { Values } from './values.js';

type Obj = Record<string, unknown>;

/** The label kube-prometheus-stack's Grafana sidecar finds dashboards by (config/monitoring's). */
const DASHBOARD_LABEL = 'grafana_dashboard';

/** Labels from the value `expr` added to an object's labels (a map key of them). */
function moreLabels(holes: Holes, labels: Obj, expr: string): void {
  labels[
    holes.lines((pad) => [
      `${pad}{{- with ${expr} }}`,
      `${pad}{{- toYaml . | nindent ${pad.length} }}`,
      `${pad}{{- end }}`,
    ])
  ] = '';
}

/** A monitoring object of config/monitoring, its fields made values under `<v>.monitoring`. */
export function monitoring(o: Manifest, holes: Holes, values: Values, v: string, root: string): void {
  const m = `${v}.monitoring`;
  const labels = (o.metadata.labels ??= {});
  if (o.kind === 'ConfigMap' && labels[DASHBOARD_LABEL] !== undefined) {
    values.set('monitoring.dashboards.labels', { [DASHBOARD_LABEL]: labels[DASHBOARD_LABEL] });
    delete labels[DASHBOARD_LABEL];
    moreLabels(holes, labels, `${m}.dashboards.labels`);
    values.set('monitoring.dashboards.namespace', '');
    o.metadata.namespace = holes.scalar(
      `${m}.dashboards.namespace | default ${root}.Release.Namespace | quote`,
    );
    values.set('monitoring.dashboards.folder', '');
    values.set('monitoring.dashboards.folderAnnotation', 'grafana_folder');
    (o.metadata as Obj)[
      holes.lines((pad) => [
        `${pad}{{- with ${m}.dashboards.folder }}`,
        `${pad}annotations:`,
        `${pad}  {{ ${m}.dashboards.folderAnnotation }}: {{ . | quote }}`,
        `${pad}{{- end }}`,
      ])
    ] = '';
    return;
  }
  values.set('monitoring.labels', {});
  moreLabels(holes, labels, `${m}.labels`);
  if (o.kind === 'PodMonitor') {
    for (const endpoint of ((o.spec as Obj | undefined)?.podMetricsEndpoints ?? []) as Obj[]) {
      values.set('monitoring.podMonitors.interval', '');
      endpoint[holes.optionalScalar('interval', `${m}.podMonitors.interval`)] = '';
      values.set('monitoring.podMonitors.scrapeTimeout', '');
      endpoint[holes.optionalScalar('scrapeTimeout', `${m}.podMonitors.scrapeTimeout`)] = '';
      values.set('monitoring.podMonitors.relabelings', []);
      endpoint.relabelings = [
        ...((endpoint.relabelings as unknown[] | undefined) ?? []),
        holes.listItems(`${m}.podMonitors.relabelings`),
      ];
      values.set('monitoring.podMonitors.metricRelabelings', []);
      endpoint[holes.optionalBlock('metricRelabelings', `${m}.podMonitors.metricRelabelings`)] = '';
    }
  }
  if (o.kind === 'PrometheusRule') {
    const base = DEFAULT_RULE_OPTIONS.runbookUrl;
    values.set('monitoring.prometheusRule.runbookBaseUrl', base);
    for (const group of ((o.spec as Obj | undefined)?.groups ?? []) as Obj[])
      for (const rule of (group.rules ?? []) as Obj[]) {
        const annotations = rule.annotations as Obj | undefined;
        const url = annotations?.runbook_url;
        if (typeof url !== 'string' || !url.startsWith(`${base}#`))
          throw new Error(
            `PrometheusRule ${o.metadata.name}: a runbook_url not under ${base}: ${String(url)}`,
          );
        annotations!.runbook_url = holes.scalar(
          `printf "%s${url.slice(base.length)}" (trimSuffix "/" ${m}.prometheusRule.runbookBaseUrl) | quote`,
        );
      }
  }
}

/** The dns-server's NetworkPolicy: on/off, and who reaches the DNS and the metrics port, as values. */
export function networkPolicy(o: Manifest, holes: Holes, values: Values, v: string): void {
  values.set('dnsServer.networkPolicy.enabled', true);
  for (const rule of ((o.spec as Obj | undefined)?.ingress ?? []) as Obj[]) {
    const ports = ((rule.ports ?? []) as { port: unknown }[]).map((p) => p.port);
    // The rules admitting other namespaces; the one within the namespace (helm test) stays config/'s.
    const elsewhere = ((rule.from ?? []) as Obj[]).some((peer) => peer.namespaceSelector !== undefined);
    const key = !elsewhere
      ? undefined
      : ports.includes(8080)
        ? 'metricsFrom'
        : ports.includes(5353)
          ? 'dnsFrom'
          : undefined;
    if (!key) continue;
    if (rule.from === undefined) throw new Error(`NetworkPolicy ${o.metadata.name}: a rule without from`);
    values.set(`dnsServer.networkPolicy.${key}`, rule.from);
    rule.from = holes.block(`${v}.networkPolicy.${key}`);
  }
}
