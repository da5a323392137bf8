// Pure: one object of config/ as the text of a Helm template: config/'s
// namespaces as the release's or a value, Helm's labels, and for each
// component's Deployment the fields that are values (replicas, image, the
// flags of FLAGS, resources, scheduling), their defaults registered in Values.
import { Holes } from './holes.js';
import type { Manifest } from './manifest.js';
import { monitoring, networkPolicy } from './monitoring.js';
import type { Values } from './values.js';

export type { Manifest } from './manifest.js';

/** The namespaces of config/: the management side's becomes the release's, the workload side's a value. */
export const OPERATOR_NAMESPACE = 'capi-dns-system';
export const RECORDS_NAMESPACE = 'capi-dns';

/** Flags of each component that are values; any other flag stays as config/ has it. */
const FLAGS = {
  operator: {
    '--domain-suffix': 'zone',
    '--records-namespace': 'recordsNamespace',
    '--shards': 'operator.shards',
  },
  dnsServer: {
    '--zone': 'zone',
    '--namespace': 'recordsNamespace',
    '--build-heap-limit': 'dnsServer.buildHeapLimit',
  },
} as const;

type Component = keyof typeof FLAGS;

type Obj = Record<string, unknown>;

function child(o: Obj, key: string, what: string): Obj {
  const c = o[key];
  if (typeof c !== 'object' || c === null || Array.isArray(c)) throw new Error(`${what}: no ${key}`);
  return c as Obj;
}

const RBAC_KINDS = new Set(['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);

/** Templating of objects for one root of values: `$` in a template file, `$.root` in a named template. */
export class Scope {
  private readonly holes = new Holes();
  private readonly v: string;

  constructor(
    private readonly root: string,
    private readonly values: Values,
    private readonly images: Set<string>,
    /** In named templates, Helm's labels are added only when this is true (not inside ConfigMaps). */
    private readonly labelsIf?: string,
  ) {
    this.v = `${root}.Values`;
  }

  /**
   * A management object: the release namespace, Helm's labels, and the operator's values. The
   * cluster-wide objects (ClusterRoles, ClusterRoleBindings) are named after the release's full
   * name, so that a second release (another watchNamespace) owns its own; the release `capi-dns`
   * keeps config/'s names.
   */
  operatorObject(original: Manifest): string {
    const o = this.common(original, 'operator');
    this.releaseNamed(o);
    if (o.kind === 'Deployment') this.deployment(o, 'operator');
    if (o.kind === 'PodDisruptionBudget') this.podDisruptionBudget(o, 'operator');
    let text: string;
    // DNSZones are cluster-scoped: their grant stays cluster-wide with operator.watchNamespace (ADR 0213).
    if (o.kind === 'ClusterRoleBinding' && original.metadata.name !== 'capi-dns-controller-dnszones') {
      // operator.watchNamespace: the same grant, in that namespace only (config/README.md).
      const rb = this.common(original, 'operator');
      this.releaseNamed(rb);
      rb.kind = 'RoleBinding';
      rb.metadata.namespace = this.holes.scalar(`${this.v}.operator.watchNamespace | quote`);
      text =
        `{{- if not ${this.v}.operator.watchNamespace }}\n${this.holes.render(o)}` +
        `{{- else }}\n${this.holes.render(rb)}{{- end }}\n`;
    } else text = this.holes.render(o);
    return this.gated(o.kind, 'operator', text);
  }

  /** A workload object: the records namespace, Helm's labels when asked, and the dns-server's values. */
  workloadObject(original: Manifest): string {
    const o = this.common(original, 'dnsServer');
    if (o.kind === 'Namespace') o.metadata.name = this.holes.scalar(`${this.v}.recordsNamespace`);
    if (o.kind === 'Deployment') this.deployment(o, 'dnsServer');
    if (o.kind === 'PodDisruptionBudget') this.podDisruptionBudget(o, 'dnsServer');
    if (o.kind === 'NetworkPolicy') networkPolicy(o, this.holes, this.values, `${this.v}.dnsServer`);
    if (o.kind === 'ResourceQuota') {
      // Room for every replica and a rolling update's surge, and never less than config/'s.
      const hard = child(child(o, 'spec', 'ResourceQuota'), 'hard', 'ResourceQuota');
      const floor = Number(hard.pods);
      hard.pods = this.holes.scalar(`max ${floor} (mul 2 ${this.v}.dnsServer.replicas) | quote`);
    }
    const text = this.holes.render(o);
    return o.kind === 'NetworkPolicy'
      ? `{{- if ${this.v}.dnsServer.networkPolicy.enabled }}\n${text}{{- end }}\n`
      : this.gated(o.kind, 'dnsServer', text);
  }

  /**
   * An object of config/dns-server-exposed: the records namespace and Helm's labels; the Service
   * takes the annotations a cloud's load balancer needs (dnsServer.expose.annotations).
   */
  exposedObject(original: Manifest): string {
    const o = this.common(original, 'dnsServer');
    if (o.kind === 'Service') {
      (o.metadata as Obj)[this.holes.optionalBlock('annotations', `${this.v}.dnsServer.expose.annotations`)] =
        '';
      this.values.set('dnsServer.expose.annotations', {});
    }
    return this.holes.render(o);
  }

  /** A monitoring object (config/monitoring): namespaces, labels, and the monitoring values. */
  monitoringObject(original: Manifest): string {
    const o = this.common(original);
    monitoring(o, this.holes, this.values, this.v, this.root);
    return this.holes.render(o);
  }

  /** RBAC behind `<c>.rbac.create`, the ServiceAccount behind `<c>.serviceAccount.create`. */
  private gated(kind: string, c: Component, text: string): string {
    const gate = RBAC_KINDS.has(kind)
      ? `${c}.rbac.create`
      : kind === 'ServiceAccount'
        ? `${c}.serviceAccount.create`
        : kind === 'PodDisruptionBudget'
          ? `${c}.podDisruptionBudget.enabled`
          : undefined;
    if (!gate) return text;
    this.values.set(gate, true);
    return `{{- if ${this.v}.${gate} }}\n${text}{{- end }}\n`;
  }

  /** A cluster-wide object's name, and a ClusterRole's in a roleRef, after the release (capi-dns-x → <fullname>-x). */
  private releaseNamed(o: Manifest): void {
    const named = (name: unknown) => {
      const rest = String(name).replace(/^capi-dns/, '');
      if (rest === String(name)) throw new Error(`${o.kind} ${String(name)}: not named capi-dns…`);
      return this.holes.scalar(`printf "%s${rest}" (include "capi-dns.fullname" ${this.root}) | quote`);
    };
    if (o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding') o.metadata.name = named(o.metadata.name);
    const ref = o.roleRef as Obj | undefined;
    if (ref?.kind === 'ClusterRole') ref.name = named(ref.name);
  }

  private podDisruptionBudget(o: Manifest, c: Component): void {
    const spec = child(o, 'spec', 'PodDisruptionBudget');
    for (const key of ['minAvailable', 'maxUnavailable'] as const)
      if (spec[key] !== undefined) {
        this.values.set(`${c}.podDisruptionBudget.${key}`, spec[key]);
        spec[key] = this.holes.scalar(`${this.v}.${c}.podDisruptionBudget.${key}`);
      }
  }

  /** A copy with config/'s namespaces templated (metadata and RBAC subjects) and Helm's labels. */
  private common(original: Manifest, c?: Component): Manifest {
    const o = structuredClone(original);
    const ns = (name: unknown) =>
      name === OPERATOR_NAMESPACE
        ? this.holes.scalar(`${this.root}.Release.Namespace`)
        : name === RECORDS_NAMESPACE
          ? this.holes.scalar(`${this.v}.recordsNamespace`)
          : name;
    if (o.metadata.namespace) o.metadata.namespace = ns(o.metadata.namespace) as string;
    if (Array.isArray(o.subjects))
      for (const s of o.subjects as Obj[]) {
        if (s.namespace) s.namespace = ns(s.namespace);
        if (c && s.kind === 'ServiceAccount') s.name = this.serviceAccountName(c, s.name);
      }
    if (c && o.kind === 'ServiceAccount') {
      o.metadata.name = this.serviceAccountName(c, o.metadata.name);
      this.values.set(`${c}.serviceAccount.annotations`, {});
      (o.metadata as Obj)[
        this.holes.optionalBlock('annotations', `${this.v}.${c}.serviceAccount.annotations`)
      ] = '';
    }
    const include = `include "capi-dns.labels" ${this.root}`;
    const labels = this.labelsIf
      ? this.holes.lines((pad) => [
          `${pad}{{- if ${this.labelsIf} }}`,
          `${pad}{{- ${include} | nindent ${pad.length} }}`,
          `${pad}{{- end }}`,
        ])
      : this.holes.lines((pad) => [`${pad}{{- ${include} | nindent ${pad.length} }}`]);
    o.metadata.labels = { ...(o.metadata.labels ?? {}), [labels]: '' };
    return o;
  }

  /** The list value `key` (default empty) after config/'s items of `o[field]`, or alone when config/ has none. */
  private extraItems(o: Obj, field: string, key: string): void {
    this.values.set(key, []);
    const had = o[field] as unknown[] | undefined;
    if (had) o[field] = [...had, this.holes.listItems(`${this.v}.${key}`)];
    else o[this.holes.optionalBlock(field, `${this.v}.${key}`)] = '';
  }

  /** `<c>.serviceAccount.name`, config/'s name by default. */
  private serviceAccountName(c: Component, name: unknown): string {
    this.values.set(`${c}.serviceAccount.name`, name);
    return this.holes.scalar(`${this.v}.${c}.serviceAccount.name | quote`);
  }

  /** config/'s Deployment of a component: replicas, image, flags, resources and scheduling as values. */
  private deployment(d: Manifest, c: Component): void {
    const what = `Deployment ${d.metadata.name}`;
    const spec = child(d, 'spec', what);
    const template = child(spec, 'template', what);
    const pod = child(template, 'spec', what);
    const containers = pod.containers as Obj[] | undefined;
    const container = containers?.[0];
    if (!container || containers.length !== 1) throw new Error(`${what}: not one container`);
    const v = `${this.v}.${c}`;

    this.values.set(`${c}.replicas`, spec.replicas);
    spec.replicas = this.holes.scalar(`${v}.replicas`);

    const meta = child(template, 'metadata', what);
    meta[this.holes.optionalBlock('annotations', `${v}.podAnnotations`)] = '';
    this.values.set(`${c}.podAnnotations`, {});
    // Helm's instance label on the pods too (not in the selector, which stays config/'s and immutable).
    const instance = `app.kubernetes.io/instance: {{ ${this.root}.Release.Name }}`;
    const podLabels = child(meta, 'labels', what);
    podLabels[
      this.holes.lines((pad) => [
        ...(this.labelsIf
          ? [`${pad}{{- if ${this.labelsIf} }}`, `${pad}${instance}`, `${pad}{{- end }}`]
          : [`${pad}${instance}`]),
        `${pad}{{- with ${v}.podLabels }}`,
        `${pad}{{- toYaml . | nindent ${pad.length} }}`,
        `${pad}{{- end }}`,
      ])
    ] = '';
    this.values.set(`${c}.podLabels`, {});
    pod.serviceAccountName = this.serviceAccountName(c, pod.serviceAccountName);
    this.values.set(`${c}.podSecurityContext`, pod.securityContext);
    pod.securityContext = this.holes.block(`${v}.podSecurityContext`);
    this.values.set(`${c}.securityContext`, container.securityContext);
    container.securityContext = this.holes.block(`${v}.securityContext`);
    // A proxy, a CA bundle: more environment, volumes and mounts after config/'s.
    this.extraItems(container, 'env', `${c}.extraEnv`);
    this.extraItems(container, 'volumeMounts', `${c}.extraVolumeMounts`);
    this.extraItems(pod, 'volumes', `${c}.extraVolumes`);

    const image = String(container.image);
    const colon = image.lastIndexOf(':');
    if (colon < 0 || image.slice(colon).includes('/')) throw new Error(`${what}: image ${image} has no tag`);
    this.values.set(`${c}.image.repository`, image.slice(0, colon));
    this.values.set(`${c}.image.tag`, '');
    this.values.set(`${c}.image.digest`, '');
    this.values.set(`${c}.image.pullPolicy`, '');
    this.values.set(`${c}.imagePullSecrets`, []);
    this.images.add(image.slice(colon + 1));
    container.image = this.holes.scalar(
      `include "capi-dns.image" (dict "image" ${v}.image "root" ${this.root}) | quote`,
    );
    container[this.holes.optionalScalar('imagePullPolicy', `${v}.image.pullPolicy`)] = '';

    container.args = [
      ...(container.args as string[]).map((arg) => this.flag(arg, c)),
      ...(c === 'operator'
        ? [
            this.holes.lines((pad) => [
              `${pad}{{- with ${v}.watchNamespace }}`,
              `${pad}- {{ printf "--namespace=%s" . | quote }}`,
              `${pad}{{- end }}`,
            ]),
          ]
        : []),
      this.holes.rangeItems(`${v}.extraArgs`),
    ];
    if (c === 'operator') this.values.set('operator.watchNamespace', '');
    this.values.set(`${c}.extraArgs`, []);

    this.values.set(`${c}.resources`, container.resources);
    container.resources = this.holes.block(`${v}.resources`);

    this.values.set(`${c}.priorityClassName`, pod.priorityClassName ?? '');
    delete pod.priorityClassName;
    pod[this.holes.optionalScalar('priorityClassName', `${v}.priorityClassName`)] = '';
    this.values.set(`${c}.topologySpreadConstraints`, pod.topologySpreadConstraints ?? []);
    delete pod.topologySpreadConstraints;
    pod[this.holes.optionalBlock('topologySpreadConstraints', `${v}.topologySpreadConstraints`)] = '';
    for (const [key, empty] of [
      ['imagePullSecrets', []],
      ['nodeSelector', {}],
      ['tolerations', []],
      ['affinity', {}],
    ] as const) {
      if (pod[key] !== undefined)
        throw new Error(`${what}: config/ sets ${key}; make it the value's default`);
      this.values.set(`${c}.${key}`, empty);
      pod[this.holes.optionalBlock(key, `${v}.${key}`)] = '';
    }
  }

  /** A flag of FLAGS as its value (`--name={{ value }}`, quoted); any other as it is. */
  private flag(arg: string, c: Component): string {
    const eq = arg.indexOf('=');
    const flags: Record<string, string> = FLAGS[c];
    const key = eq > 0 ? flags[arg.slice(0, eq)] : undefined;
    if (!key) return arg;
    const raw = arg.slice(eq + 1);
    this.values.set(key, /^\d+$/.test(raw) ? Number(raw) : raw);
    return this.holes.scalar(`printf "${arg.slice(0, eq)}=%v" ${this.v}.${key} | quote`);
  }
}
