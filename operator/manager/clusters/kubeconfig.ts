// A workload cluster's kubeconfig comes from a Secret that anyone allowed to
// write Secrets in the Cluster's namespace can change, so it is untrusted
// input: the operator must not let it run a command (exec, the gcp/azure
// auth-providers' cmd-path), read a file of the operator's container
// (token-file, client-certificate, client-key, certificate-authority, the
// file auth-provider's tokenFile: the operator's own ServiceAccount token is
// one such file), or turn off TLS verification. What Cluster API writes needs
// none of that: a server URL, the CA data, and a client certificate and key or
// a token, all inline. So the text is parsed here, not by
// @kubernetes/client-node's loadFromString (which reads token-file from disk
// while it parses, and the other files at request time), every field is
// checked against what is allowed, and the KubeConfig is built from the
// allowed fields of the current context only: a refused field never reaches
// the client. As Flux's kustomize-controller does, exec is allowed only with
// --insecure-kubeconfig-exec and skipping TLS verification only with
// --insecure-kubeconfig-tls; file paths have no flag (a path in a Secret
// names a file of the operator, never what the Secret's author has).
import { KubeConfig, type Cluster, type User } from '@kubernetes/client-node';
import { parse } from 'yaml';

export interface KubeconfigPolicy {
  /** users[].user.exec and users[].user.auth-provider (both can run a command in the operator). */
  allowExec: boolean;
  /** clusters[].cluster.insecure-skip-tls-verify: true, and an http:// server. */
  allowInsecureTls: boolean;
}

export const STRICT_POLICY: KubeconfigPolicy = { allowExec: false, allowInsecureTls: false };

/** A field the policy refuses: where it is (e.g. users[0].user.exec) and why. */
export interface Refusal {
  field: string;
  reason: string;
}

export type KubeconfigResult =
  { ok: true; kc: KubeConfig } | { ok: false; error: string; refusals: Refusal[] };

const EXEC_FLAG = 'allowed only with --insecure-kubeconfig-exec';
const TLS_FLAG = 'allowed only with --insecure-kubeconfig-tls';

/** What each cluster field may be; a field not listed is refused (a future one could read a file too). */
const CLUSTER_FIELDS: Record<string, (value: unknown, policy: KubeconfigPolicy) => string | undefined> = {
  server: (v, p) => {
    if (typeof v !== 'string') return 'must be a URL';
    let url: URL;
    try {
      url = new URL(v);
    } catch {
      return `not a URL: ${v}`;
    }
    if (url.protocol === 'https:') return undefined;
    if (url.protocol === 'http:')
      return p.allowInsecureTls ? undefined : `http:// sends the credentials in clear (${TLS_FLAG})`;
    return `unsupported scheme ${url.protocol}`;
  },
  'certificate-authority-data': (v) => (typeof v === 'string' ? undefined : 'must be base64 text'),
  // Only the name the server's certificate is checked against; still checked against the CA above.
  'tls-server-name': (v) => (typeof v === 'string' ? undefined : 'must be a name'),
  'insecure-skip-tls-verify': (v, p) =>
    v === false || v === undefined || p.allowInsecureTls
      ? undefined
      : `turns off verification of the server's certificate (${TLS_FLAG})`,
  'certificate-authority': () => 'a file path: only certificate-authority-data is accepted',
  // The operator's egress is the platform's to configure (HTTPS_PROXY in its Deployment), not a
  // Secret author's; Cluster API never writes it.
  'proxy-url': () => 'a proxy chosen by the Secret is not accepted',
  // Harmless and never passed on.
  'disable-compression': () => undefined,
  extensions: () => undefined,
};

const USER_FIELDS: Record<string, (value: unknown, policy: KubeconfigPolicy) => string | undefined> = {
  token: (v) => (typeof v === 'string' ? undefined : 'must be text'),
  'client-certificate-data': (v) => (typeof v === 'string' ? undefined : 'must be base64 text'),
  'client-key-data': (v) => (typeof v === 'string' ? undefined : 'must be base64 text'),
  exec: (_v, p) => (p.allowExec ? undefined : `runs a command in the operator (${EXEC_FLAG})`),
  'auth-provider': (_v, p) =>
    p.allowExec
      ? undefined
      : `runs a command (gcp, azure cmd-path) or reads a file (tokenFile) in the operator (${EXEC_FLAG})`,
  'token-file': () => 'a file path: read from the operator, only token is accepted',
  tokenFile: () => 'a file path: read from the operator, only token is accepted',
  'client-certificate': () => 'a file path: only client-certificate-data is accepted',
  'client-key': () => 'a file path: only client-key-data is accepted',
  // Basic authentication: removed from Kubernetes in 1.19 and never written by Cluster API;
  // accepting it would widen what a Secret can make the operator send for no cluster that takes it.
  username: () => 'basic authentication is not accepted',
  password: () => 'basic authentication is not accepted',
  extensions: () => undefined,
};

/** Every refused field of the whole document (not only the current context's: an exec anywhere is worth saying). */
export function kubeconfigRefusals(doc: unknown, policy: KubeconfigPolicy): Refusal[] {
  const refusals: Refusal[] = [];
  if (!isRecord(doc)) return [{ field: '(document)', reason: 'not a YAML mapping' }];
  const check = (list: unknown, name: 'clusters' | 'users', fields: typeof CLUSTER_FIELDS): void => {
    if (list === undefined || list === null) return;
    if (!Array.isArray(list)) return void refusals.push({ field: name, reason: 'not a list' });
    const inner = name === 'clusters' ? 'cluster' : 'user';
    list.forEach((entry: unknown, i) => {
      const body = isRecord(entry) ? entry[inner] : undefined;
      if (body === undefined || body === null) return;
      if (!isRecord(body))
        return void refusals.push({ field: `${name}[${i}].${inner}`, reason: 'not a mapping' });
      for (const [key, value] of Object.entries(body)) {
        const field = `${name}[${i}].${inner}.${key}`;
        const rule = fields[key];
        const reason = rule ? rule(value, policy) : 'not a field the operator accepts';
        if (reason) refusals.push({ field, reason });
      }
    });
  };
  check(doc.clusters, 'clusters', CLUSTER_FIELDS);
  check(doc.users, 'users', USER_FIELDS);
  return refusals;
}

/**
 * Parses a kubeconfig from an untrusted Secret and builds a client config of
 * its current context, or says which fields were refused.
 */
export function loadUntrustedKubeconfig(text: string, policy: KubeconfigPolicy): KubeconfigResult {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    return fail([
      { field: '(document)', reason: `not YAML: ${err instanceof Error ? err.message : String(err)}` },
    ]);
  }
  const refusals = kubeconfigRefusals(doc, policy);
  if (refusals.length) return fail(refusals);
  if (!isRecord(doc)) return fail([{ field: '(document)', reason: 'not a YAML mapping' }]);
  const current = doc['current-context'];
  if (typeof current !== 'string' || !current)
    return fail([{ field: 'current-context', reason: 'missing: it names no current cluster' }]);
  const context = namedEntry(doc.contexts, current, 'context');
  if (!context) return fail([{ field: 'current-context', reason: `no context named ${current}` }]);
  const clusterName = context.body.cluster;
  const userName = context.body.user;
  const cluster =
    typeof clusterName === 'string' ? namedEntry(doc.clusters, clusterName, 'cluster') : undefined;
  if (!cluster)
    return fail([
      {
        field: `contexts[${context.index}].context.cluster`,
        reason: `no cluster named ${String(clusterName)}`,
      },
    ]);
  const server = cluster.body.server;
  if (typeof server !== 'string')
    return fail([{ field: `clusters[${cluster.index}].cluster.server`, reason: 'missing' }]);
  const user = typeof userName === 'string' ? namedEntry(doc.users, userName, 'user') : undefined;
  if (userName !== undefined && !user)
    return fail([
      { field: `contexts[${context.index}].context.user`, reason: `no user named ${String(userName)}` },
    ]);

  // Only the allowed fields, copied one by one: whatever else the document holds stays behind.
  const safeCluster: Cluster = {
    name: 'workload',
    server: server.replace(/\/$/, ''),
    caData: stringOrUndefined(cluster.body['certificate-authority-data']),
    tlsServerName: stringOrUndefined(cluster.body['tls-server-name']),
    skipTLSVerify: policy.allowInsecureTls && cluster.body['insecure-skip-tls-verify'] === true,
  };
  const u = user?.body ?? {};
  const safeUser: User = {
    name: 'workload',
    token: stringOrUndefined(u.token),
    certData: stringOrUndefined(u['client-certificate-data']),
    keyData: stringOrUndefined(u['client-key-data']),
    // Reached only with --insecure-kubeconfig-exec: the refusals above stop them otherwise.
    ...(policy.allowExec && u.exec !== undefined ? { exec: u.exec } : {}),
    ...(policy.allowExec && u['auth-provider'] !== undefined ? { authProvider: u['auth-provider'] } : {}),
  };
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser(safeCluster, safeUser);
  return { ok: true, kc };
}

/** "users[0].user.exec: runs a command in the operator (…); …" */
export function describeRefusals(refusals: Refusal[]): string {
  return refusals.map((r) => `${r.field}: ${r.reason}`).join('; ');
}

function fail(refusals: Refusal[]): KubeconfigResult {
  return { ok: false, error: describeRefusals(refusals), refusals };
}

function namedEntry(
  list: unknown,
  name: string,
  inner: string,
): { index: number; body: Record<string, unknown> } | undefined {
  if (!Array.isArray(list)) return undefined;
  const index = list.findIndex((e: unknown) => isRecord(e) && e.name === name);
  const entry: unknown = list[index];
  if (index < 0 || !isRecord(entry)) return undefined;
  const body = entry[inner];
  return { index, body: isRecord(body) ? body : {} };
}

function stringOrUndefined(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
