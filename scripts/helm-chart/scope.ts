// Pure: one object of config/ as the text of a Helm template: config/'s
// namespaces as the release's or a value, Helm's labels, and for each
// component's Deployment the fields that are values (replicas, image, the
// flags of FLAGS, resources, scheduling), their defaults registered in Values.
import { Holes } from './holes.js';
import type { Values } from './values.js';

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, unknown> };
  [field: string]: unknown;
}

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

  /** A management object: the release namespace, Helm's labels, and the operator's values. */
  operatorObject(original: Manifest): string {
    const o = this.common(original);
    if (o.kind === 'Deployment') this.deployment(o, 'operator');
    // DNSZones are cluster-scoped: their grant stays cluster-wide with operator.watchNamespace (ADR 0212).
    if (o.kind === 'ClusterRoleBinding' && o.metadata.name !== 'capi-dns-controller-dnszones') {
      // operator.watchNamespace: the same grant, in that namespace only (config/README.md).
      const rb = this.common(original);
      rb.kind = 'RoleBinding';
      rb.metadata.namespace = this.holes.scalar(`${this.v}.operator.watchNamespace | quote`);
      return (
        `{{- if not ${this.v}.operator.watchNamespace }}\n${this.holes.render(o)}` +
        `{{- else }}\n${this.holes.render(rb)}{{- end }}\n`
      );
    }
    return this.holes.render(o);
  }

  /** A workload object: the records namespace, Helm's labels when asked, and the dns-server's values. */
  workloadObject(original: Manifest): string {
    const o = this.common(original);
    if (o.kind === 'Namespace') o.metadata.name = this.holes.scalar(`${this.v}.recordsNamespace`);
    if (o.kind === 'Deployment') this.deployment(o, 'dnsServer');
    if (o.kind === 'PodDisruptionBudget') {
      const spec = child(o, 'spec', 'PodDisruptionBudget');
      this.values.set('dnsServer.podDisruptionBudget.minAvailable', spec.minAvailable);
      spec.minAvailable = this.holes.scalar(`${this.v}.dnsServer.podDisruptionBudget.minAvailable`);
    }
    return this.holes.render(o);
  }

  /** An optional directory's object: namespaces and labels only. */
  plainObject(original: Manifest): string {
    return this.holes.render(this.common(original));
  }

  /** A copy with config/'s namespaces templated (metadata and RBAC subjects) and Helm's labels. */
  private common(original: Manifest): Manifest {
    const o = structuredClone(original);
    const ns = (name: unknown) =>
      name === OPERATOR_NAMESPACE
        ? this.holes.scalar(`${this.root}.Release.Namespace`)
        : name === RECORDS_NAMESPACE
          ? this.holes.scalar(`${this.v}.recordsNamespace`)
          : name;
    if (o.metadata.namespace) o.metadata.namespace = ns(o.metadata.namespace) as string;
    if (Array.isArray(o.subjects))
      for (const s of o.subjects as Obj[]) if (s.namespace) s.namespace = ns(s.namespace);
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

    const image = String(container.image);
    const colon = image.lastIndexOf(':');
    if (colon < 0 || image.slice(colon).includes('/')) throw new Error(`${what}: image ${image} has no tag`);
    this.values.set(`${c}.image.repository`, image.slice(0, colon));
    this.values.set(`${c}.image.tag`, '');
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

    if (c === 'dnsServer') {
      this.values.set('dnsServer.priorityClassName', pod.priorityClassName);
      pod.priorityClassName = this.holes.scalar(`${v}.priorityClassName`);
      this.values.set('dnsServer.topologySpreadConstraints', pod.topologySpreadConstraints);
      pod.topologySpreadConstraints = this.holes.block(`${v}.topologySpreadConstraints`);
    }
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
