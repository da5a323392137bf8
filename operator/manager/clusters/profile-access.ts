// Pure: how a ClusterProfile's access provider becomes a kubeconfig, in
// process (--inventory=cluster-profile). The module's two plugins are
// implemented here, not run: kubeconfig-secretreader (a kubeconfig in a
// Secret; its user's token or inline client certificate only) and
// secretreader (a token in a Secret). No exec plugin is ever run, no file
// read, and the KEP 5339 additional-args/additional-envs extensions are
// refused: the same allow-list as a Cluster API kubeconfig (kubeconfig.ts,
// issue 19). The server and CA are the profile's, as pkg/access takes them.
// A Secret is read only from the profile's own namespace, unless
// --cluster-profile-secret-namespace allows another (ADR 0214).
import { parse, stringify } from 'yaml';
import {
  ADDITIONAL_ARGS_EXTENSION,
  ADDITIONAL_ENVS_EXTENSION,
  EXEC_EXTENSION,
  KUBECONFIG_SECRETREADER,
  SECRETREADER,
  type AccessProvider,
  type ClusterProfile,
  type ProfileCluster,
} from '../../../api/index.js';
import { describeRefusals, kubeconfigRefusals, STRICT_POLICY } from './kubeconfig.js';

/** The access providers implemented in process, in the order they are preferred. */
export const IN_PROCESS_PROVIDERS = [KUBECONFIG_SECRETREADER, SECRETREADER] as const;

export interface SecretRef {
  namespace: string;
  name: string;
}

export type AccessPlan =
  | { kind: 'kubeconfig'; secret: SecretRef; key: string; context?: string; cluster: ProfileCluster }
  | { kind: 'token'; secret: SecretRef; key: 'token'; cluster: ProfileCluster }
  | { problem: string };

/**
 * Which Secret the profile's access provider names, and how to read it; or why the profile cannot
 * be connected to in process. `otherSecretNamespaces`: where else a Secret may be read.
 */
export function accessPlanOf(
  profile: ClusterProfile,
  otherSecretNamespaces: ReadonlySet<string>,
): AccessPlan {
  const namespace = profile.metadata.namespace ?? '';
  const byName = new Map<string, AccessProvider>();
  // The deprecated name first, so that accessProviders wins (as pkg/access does).
  for (const p of [
    ...(profile.status?.credentialProviders ?? []),
    ...(profile.status?.accessProviders ?? []),
  ])
    byName.set(p.name, p);
  const chosen = IN_PROCESS_PROVIDERS.map((n) => byName.get(n)).find((p) => p !== undefined);
  if (!chosen)
    return {
      problem: `no access provider capi-dns implements in process (${IN_PROCESS_PROVIDERS.join(', ')}); the profile offers: ${[...byName.keys()].join(', ') || 'none'}`,
    };
  const cluster = chosen.cluster;
  if (!cluster?.server) return { problem: `access provider ${chosen.name}: no cluster.server` };
  const extensions = cluster.extensions ?? [];
  const forbidden = extensions.find(
    (e) => e.name === ADDITIONAL_ARGS_EXTENSION || e.name === ADDITIONAL_ENVS_EXTENSION,
  );
  if (forbidden)
    return {
      problem: `access provider ${chosen.name}: extension ${forbidden.name} is not accepted (capi-dns runs no exec plugin)`,
    };
  const { extensions: _ignored, ...fields } = cluster;
  const refusals = kubeconfigRefusals({ clusters: [{ name: 'profile', cluster: fields }] }, STRICT_POLICY);
  if (refusals.length) return { problem: `access provider ${chosen.name}: ${describeRefusals(refusals)}` };
  const config = extensions.find((e) => e.name === EXEC_EXTENSION)?.extension ?? {};
  const text = (k: string) => (typeof config[k] === 'string' ? (config[k] as string) : undefined);
  const secretNamespace = (ns: string | undefined): string | { problem: string } => {
    const want = ns || namespace;
    if (want === namespace || otherSecretNamespaces.has(want)) return want;
    return {
      problem: `access provider ${chosen.name}: Secret namespace ${want} is not the profile's (${namespace}) and --cluster-profile-secret-namespace does not allow it`,
    };
  };
  if (chosen.name === KUBECONFIG_SECRETREADER) {
    const name = text('name');
    const key = text('key');
    if (!name || !key)
      return { problem: `access provider ${chosen.name}: extension ${EXEC_EXTENSION} needs name and key` };
    const ns = secretNamespace(text('namespace'));
    if (typeof ns !== 'string') return ns;
    const context = text('context');
    return {
      kind: 'kubeconfig',
      secret: { namespace: ns, name },
      key,
      ...(context ? { context } : {}),
      cluster,
    };
  }
  // secretreader: a token in Secret <namespace>/<clusterName>, key "token".
  const clusterName = text('clusterName');
  if (!clusterName)
    return { problem: `access provider ${chosen.name}: extension ${EXEC_EXTENSION} needs clusterName` };
  return { kind: 'token', secret: { namespace, name: clusterName }, key: 'token', cluster };
}

/** The kubeconfig to connect with: the profile's server and CA, the Secret's credentials only. */
export function kubeconfigFromSecret(
  plan: Exclude<AccessPlan, { problem: string }>,
  data: Readonly<Record<string, string>> | undefined,
): { text: string } | { problem: string } {
  const where = `Secret ${plan.secret.namespace}/${plan.secret.name}, key "${plan.key}"`;
  const value = data?.[plan.key];
  if (!value) return { problem: `no credentials: ${where} is missing or empty` };
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  let user: Record<string, string>;
  if (plan.kind === 'token') user = { token: decoded.trim() };
  else {
    const got = userOf(decoded, plan.context);
    if ('problem' in got) return { problem: `${where}: ${got.problem}` };
    user = got.user;
  }
  const cluster: Record<string, string> = { server: plan.cluster.server };
  if (plan.cluster['certificate-authority-data'])
    cluster['certificate-authority-data'] = plan.cluster['certificate-authority-data'];
  if (plan.cluster['tls-server-name']) cluster['tls-server-name'] = plan.cluster['tls-server-name'];
  return {
    text: stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'profile', cluster }],
      users: [{ name: 'profile', user }],
      contexts: [{ name: 'profile', context: { cluster: 'profile', user: 'profile' } }],
      'current-context': 'profile',
    }),
  };
}

/** The user of the kubeconfig's context, as the kubeconfig-secretreader plugin reads it. */
function userOf(
  text: string,
  contextName: string | undefined,
): { user: Record<string, string> } | { problem: string } {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    return { problem: `not YAML: ${err instanceof Error ? err.message : String(err)}` };
  }
  const refusals = kubeconfigRefusals(doc, STRICT_POLICY);
  if (refusals.length) return { problem: `kubeconfig refused: ${describeRefusals(refusals)}` };
  const d = doc as {
    extensions?: unknown[];
    'current-context'?: string;
    contexts?: { name?: string; context?: { user?: string } }[];
    users?: { name?: string; user?: Record<string, unknown> }[];
  };
  if (d.extensions?.length) return { problem: 'kubeconfig extensions are not accepted' };
  const name = contextName || d['current-context'];
  if (!name) return { problem: 'no context given and no current-context' };
  const context = d.contexts?.find((c) => c.name === name)?.context;
  if (!context) return { problem: `no context named ${name}` };
  const u = d.users?.find((x) => x.name === context.user)?.user ?? {};
  const str = (k: string) => (typeof u[k] === 'string' ? (u[k] as string) : undefined);
  const token = str('token');
  const cert = str('client-certificate-data');
  const key = str('client-key-data');
  if (Boolean(cert) !== Boolean(key))
    return { problem: 'client-certificate-data and client-key-data go together' };
  if (!token && !cert)
    return { problem: `user ${String(context.user)}: neither a token nor client-certificate-data` };
  return {
    user: {
      ...(token ? { token } : {}),
      ...(cert && key ? { 'client-certificate-data': cert, 'client-key-data': key } : {}),
    },
  };
}
