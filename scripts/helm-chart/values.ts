// Pure: the chart's values. Each is registered where the generator makes a
// field of config/ a value, with config/'s own setting as its default, so
// values.yaml and the README's table are written from config/ too. A value set
// in two places (the zone: the operator's --domain-suffix and the
// dns-server's --zone) must have one default in both, or generation fails:
// config/ disagreeing with itself is a bug the chart would hide.
import { Document, isMap, isScalar, type Pair } from 'yaml';

/** What each value means, for values.yaml and the README; a value without one fails generation. */
export const DESCRIPTIONS: Record<string, string> = {
  zone: "The DNS zone: the operator's `--domain-suffix` and the dns-server's `--zone` (names are `<name>.gateway.<cluster>.<namespace>.clusters.<zone>`).",
  recordsNamespace:
    "The workload clusters' namespace of the dns-server and its DNSRecordSets: the operator's `--records-namespace`; a direct install of the dns-server goes into it (`-n`).",
  nameOverride: "The chart's name in the release's full name (`capi-dns`).",
  fullnameOverride:
    "The full name, prefix of the cluster-wide objects (ClusterRoles, ClusterRoleBindings); empty: the release name, with `-capi-dns` unless it holds it. Namespaced objects keep config/'s names (the operator finds the dns-server's Service by it).",
  'operator.enabled': 'Install the management side: the operator, its ServiceAccount and RBAC.',
  'operator.image.repository': "The operator's image.",
  'operator.image.tag': "The image's tag; empty: the chart's appVersion.",
  'operator.image.digest': 'The image by digest (`sha256:…`), instead of the tag.',
  'operator.image.pullPolicy': "The container's imagePullPolicy; empty: Kubernetes' default.",
  'operator.imagePullSecrets': "The pod's imagePullSecrets.",
  'operator.replicas':
    'Operator replicas, active-active: each serves the management namespaces of the shards it holds (ADR 0207).',
  'operator.shards':
    "`--shards`: management namespaces are hashed into this many shards. Keep it fixed for the fleet's life and several times the replicas; 0: one leader and standbys.",
  'operator.watchNamespace':
    'Empty: the operator watches Clusters, their kubeconfig Secrets and GatewayDNS in every namespace (ClusterRoleBindings). A namespace: `--namespace` and RoleBindings in that namespace instead, so it reads no Secret elsewhere.',
  'operator.extraArgs': 'More operator flags (`--name=value` each, see operator/README.md).',
  'operator.resources': "The operator container's resources.",
  'operator.podAnnotations': "Annotations on the operator's pods.",
  'operator.serviceAccount.create':
    "Create the operator's ServiceAccount; false: use an existing one named `operator.serviceAccount.name`.",
  'operator.serviceAccount.name': "the operator's ServiceAccount, in its pods and RBAC bindings.",
  'operator.serviceAccount.annotations': "Annotations on the operator's ServiceAccount.",
  'operator.rbac.create':
    "Create the operator's Roles, ClusterRoles and their bindings; false: bring your own.",
  'operator.podLabels': "More labels on The operator's pods (the selector stays `app.kubernetes.io/name`).",
  'operator.podSecurityContext':
    "The operator's pods' securityContext (config/'s meets the `restricted` Pod Security profile).",
  'operator.securityContext': "The container's securityContext.",
  'operator.extraEnv': 'More environment variables of the container (a proxy: `HTTPS_PROXY`, `NO_PROXY`).',
  'operator.extraVolumes': "More volumes of The operator's pods (a CA bundle).",
  'operator.extraVolumeMounts':
    'More volumeMounts of the container (with extraVolumes; `NODE_EXTRA_CA_CERTS` in extraEnv for a CA bundle).',
  'operator.priorityClassName': "The operator pods' priority class; empty: none.",
  'operator.topologySpreadConstraints':
    'How the replicas spread: over nodes where possible (ScheduleAnyway), so that a drained node does not take them all.',
  'operator.podDisruptionBudget.enabled': "The operator's PodDisruptionBudget.",
  'operator.podDisruptionBudget.maxUnavailable': 'Replicas a drain may take at once.',
  'operator.nodeSelector': "The operator pods' nodeSelector.",
  'operator.tolerations': "The operator pods' tolerations.",
  'operator.affinity': "The operator pods' affinity.",
  'dnsServer.enabled':
    'Install the workload side into this cluster directly: the dns-server in the release namespace, which must be `recordsNamespace`.',
  'dnsServer.image.repository': "The dns-server's image.",
  'dnsServer.image.tag': "The image's tag; empty: the chart's appVersion.",
  'dnsServer.image.digest': 'The image by digest (`sha256:…`), instead of the tag.',
  'dnsServer.image.pullPolicy': "The container's imagePullPolicy; empty: Kubernetes' default.",
  'dnsServer.imagePullSecrets': "The pod's imagePullSecrets.",
  'dnsServer.replicas': 'dns-server replicas behind its Service.',
  'dnsServer.buildHeapLimit':
    "`--build-heap-limit`: the zone build thread's heap (100,000 records need about 96Mi); raise it with the memory limit.",
  'dnsServer.extraArgs': 'More dns-server flags (`--name=value` each, see dns-server/README.md).',
  'dnsServer.resources': "The dns-server container's resources.",
  'dnsServer.priorityClassName': "The dns-server pods' priority class (CoreDNS's).",
  'dnsServer.topologySpreadConstraints':
    'How the replicas spread: one per node by default; on a one-node cluster make it `ScheduleAnyway`.',

  'dnsServer.podAnnotations': "Annotations on the dns-server's pods.",
  'dnsServer.serviceAccount.create':
    "Create the dns-server's ServiceAccount; false: use an existing one named `dnsServer.serviceAccount.name`.",
  'dnsServer.serviceAccount.name': "the dns-server's ServiceAccount, in its pods and RBAC bindings.",
  'dnsServer.serviceAccount.annotations': "Annotations on the dns-server's ServiceAccount.",
  'dnsServer.rbac.create':
    "Create the dns-server's Roles, ClusterRoles and their bindings; false: bring your own.",
  'dnsServer.podLabels':
    "More labels on The dns-server's pods (the selector stays `app.kubernetes.io/name`).",
  'dnsServer.podSecurityContext':
    "The dns-server's pods' securityContext (config/'s meets the `restricted` Pod Security profile).",
  'dnsServer.securityContext': "The container's securityContext.",
  'dnsServer.extraEnv': 'More environment variables of the container (a proxy: `HTTPS_PROXY`, `NO_PROXY`).',
  'dnsServer.extraVolumes': "More volumes of The dns-server's pods (a CA bundle).",
  'dnsServer.extraVolumeMounts':
    'More volumeMounts of the container (with extraVolumes; `NODE_EXTRA_CA_CERTS` in extraEnv for a CA bundle).',
  'dnsServer.podDisruptionBudget.enabled': "The dns-server's PodDisruptionBudget.",
  'dnsServer.podDisruptionBudget.minAvailable': "The PodDisruptionBudget's minAvailable.",
  'dnsServer.networkPolicy.enabled':
    "The dns-server's NetworkPolicy (enforced where the CNI implements NetworkPolicy).",
  'dnsServer.networkPolicy.dnsFrom':
    "Who may query the DNS port: the cluster's CoreDNS (its pods' label differs on some distributions).",
  'dnsServer.networkPolicy.metricsFrom':
    'Who may reach the metrics and health port: your Prometheus (kube-prometheus-stack: its namespace, e.g. `kubernetes.io/metadata.name: monitoring`, or its pods).',
  'dnsServer.expose.enabled':
    'config/dns-server-exposed: the dns-server reachable from outside (a LoadBalancer Service `capi-dns-server-external` and a NetworkPolicy admitting DNS from anywhere), the name servers of DNSZones with `spec.nameservers.expose` (ADR 0215).',
  'dnsServer.expose.annotations':
    "Annotations on the exposed Service (your cloud's load balancer: e.g. `service.beta.kubernetes.io/aws-load-balancer-type: nlb`).",
  'dnsServer.nodeSelector': "The dns-server pods' nodeSelector.",
  'dnsServer.tolerations': "The dns-server pods' tolerations.",
  'dnsServer.affinity': "The dns-server pods' affinity.",
  'clusterResourceSet.enabled':
    "Install the workload side into Clusters by Cluster API: ConfigMaps and a ClusterResourceSet in the release namespace, which must be the Clusters' namespace on the management cluster.",
  'clusterResourceSet.clusterSelector': 'The Clusters it installs into.',
  'monitoring.labels':
    'More labels on the PodMonitors and PrometheusRules: what your Prometheus selects them by (kube-prometheus-stack: `release: <its release>`).',
  'monitoring.prometheusRule.enabled':
    "config/monitoring's PrometheusRules, with the management side (needs the Prometheus Operator's CRDs).",
  'monitoring.podMonitors.enabled':
    "config/monitoring's PodMonitors: the operator's with the management side, the dns-server's with the workload side (needs the Prometheus Operator's CRDs).",
  'monitoring.prometheusRule.runbookBaseUrl':
    "Where docs/operating.md is published: each alert's runbook_url is this and the alert's anchor.",
  'monitoring.podMonitors.interval': "The scrape interval; empty: Prometheus's.",
  'monitoring.podMonitors.scrapeTimeout': "The scrape timeout; empty: Prometheus's.",
  'monitoring.podMonitors.relabelings':
    'More relabelings, after the one setting the `job` label the alerts select (a `cluster` label, say).',
  'monitoring.podMonitors.metricRelabelings': 'metricRelabelings of the PodMonitors.',
  'monitoring.dashboards.enabled':
    "config/monitoring's Grafana dashboard ConfigMaps, with the management side.",
  'monitoring.dashboards.namespace':
    "The ConfigMaps' namespace (where your Grafana sidecar looks); empty: the release's.",
  'monitoring.dashboards.labels':
    "The ConfigMaps' labels the Grafana sidecar finds them by (kube-prometheus-stack: `sidecar.dashboards.label`/`labelValue`).",
  'monitoring.dashboards.folder': 'The Grafana folder, as the annotation folderAnnotation; empty: none.',
  'monitoring.dashboards.folderAnnotation':
    'The annotation naming the folder (kube-prometheus-stack: `sidecar.dashboards.folderAnnotation`, with `provider.foldersFromFilesStructure`).',
};

export interface Value {
  key: string;
  default: unknown;
  description: string;
}

export class Values {
  private readonly byKey = new Map<string, Value>();

  /** Registers `key` with its default; the same key again must have the same default. */
  set(key: string, value: unknown): void {
    const description = DESCRIPTIONS[key];
    if (!description) throw new Error(`the value ${key} has no description in scripts/helm-chart/values.ts`);
    const had = this.byKey.get(key);
    if (had && JSON.stringify(had.default) !== JSON.stringify(value))
      throw new Error(
        `config/ sets ${key} to ${JSON.stringify(had.default)} in one place and ${JSON.stringify(value)} in another`,
      );
    this.byKey.set(key, { key, default: value, description });
  }

  /** In the order of DESCRIPTIONS, which groups them. */
  list(): Value[] {
    const order = Object.keys(DESCRIPTIONS);
    return [...this.byKey.values()].sort((a, b) => order.indexOf(a.key) - order.indexOf(b.key));
  }

  /** values.yaml: every value under its dotted key, its description as a `# --` comment (helm-docs' form). */
  yaml(header: string): string {
    const tree: Record<string, unknown> = {};
    for (const v of this.list()) {
      const parts = v.key.split('.');
      let node = tree;
      for (const p of parts.slice(0, -1)) node = (node[p] ??= {}) as Record<string, unknown>;
      node[parts.at(-1)!] = v.default;
    }
    const doc = new Document(tree, { version: '1.1' });
    for (const v of this.list()) {
      const parts = v.key.split('.');
      const parent = parts.length > 1 ? doc.getIn(parts.slice(0, -1), true) : doc.contents;
      if (!isMap(parent)) throw new Error(`values.yaml: ${v.key} has no map above it`);
      const pair = parent.items.find((p: Pair) => isScalar(p.key) && p.key.value === parts.at(-1));
      if (!pair || !isScalar(pair.key)) throw new Error(`values.yaml: ${v.key} is missing`);
      pair.key.commentBefore = ` -- ${v.description}`;
    }
    for (const pair of isMap(doc.contents) ? doc.contents.items : [])
      if (isScalar(pair.key) && pair.key.commentBefore === undefined) pair.key.spaceBefore = true;
    return header + doc.toString({ lineWidth: 0 });
  }

  /**
   * values.schema.json: every value typed as its default is (a whole number an integer, a map a free
   * map), and no key beside them, so that `--set operator.replicas=three` or a typo such as
   * `operator.replica` fails `helm install` instead of being ignored.
   */
  schema(): string {
    type Schema = Record<string, unknown>;
    const object = (): Schema & { properties: Record<string, Schema> } => ({
      type: 'object',
      additionalProperties: false,
      properties: {},
    });
    const root = object();
    // What a parent chart passes to every subchart.
    root.properties.global = { type: 'object' };
    for (const v of this.list()) {
      const parts = v.key.split('.');
      let node = root;
      for (const p of parts.slice(0, -1))
        node = (node.properties[p] ??= object()) as ReturnType<typeof object>;
      node.properties[parts.at(-1)!] = { description: v.description, ...leafType(v.key, v.default) };
    }
    return JSON.stringify({ $schema: 'https://json-schema.org/draft-07/schema#', ...root }, null, 2) + '\n';
  }

  /** The README's table: key, default, description. */
  markdownTable(): string {
    const rows = this.list().map(
      (v) => `| \`${v.key}\` | \`${JSON.stringify(v.default)}\` | ${v.description.replaceAll('|', '\\|')} |`,
    );
    return ['| value | default | what it is |', '| --- | --- | --- |', ...rows].join('\n') + '\n';
  }
}

/** The JSON schema of one value, from its key and default. */
function leafType(key: string, value: unknown): Record<string, unknown> {
  // Either form Kubernetes takes: a count or a percentage.
  if (/podDisruptionBudget\.(minAvailable|maxUnavailable)$/.test(key))
    return {
      anyOf: [
        { type: 'integer', minimum: 0 },
        { type: 'string', pattern: '^[0-9]+%$' },
      ],
    };
  if (/\.(replicas|shards)$/.test(key)) return { type: 'integer', minimum: 0 };
  if (typeof value === 'boolean') return { type: 'boolean' };
  if (typeof value === 'number') return Number.isInteger(value) ? { type: 'integer' } : { type: 'number' };
  if (typeof value === 'string') return { type: 'string' };
  if (Array.isArray(value)) return { type: 'array' };
  if (typeof value === 'object' && value !== null) return { type: 'object' };
  throw new Error(`the value ${key}: no schema for its default ${JSON.stringify(value)}`);
}
