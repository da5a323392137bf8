import { stringify } from 'yaml';
import { loadUntrustedKubeconfig, STRICT_POLICY, type KubeconfigPolicy } from './kubeconfig.js';

const CA = Buffer.from('-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n').toString('base64');
const CERT = Buffer.from('client cert').toString('base64');
const KEY = Buffer.from('client key').toString('base64');

/** A kubeconfig in the shape Cluster API writes, with the cluster and user bodies the case gives. */
function kubeconfig(cluster: Record<string, unknown>, user: Record<string, unknown>): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'c1',
        cluster: { server: 'https://10.0.0.1:6443', 'certificate-authority-data': CA, ...cluster },
      },
    ],
    users: [{ name: 'c1-admin', user }],
    contexts: [{ name: 'c1-admin@c1', context: { cluster: 'c1', user: 'c1-admin' } }],
    'current-context': 'c1-admin@c1',
    preferences: {},
  });
}

const CERT_USER = { 'client-certificate-data': CERT, 'client-key-data': KEY };
const EXEC = { apiVersion: 'client.authentication.k8s.io/v1', command: 'touch', args: ['/tmp/pwned'] };
const EXEC_ALLOWED: KubeconfigPolicy = { allowExec: true, allowInsecureTls: false };
const TLS_ALLOWED: KubeconfigPolicy = { allowExec: false, allowInsecureTls: true };

describe('loadUntrustedKubeconfig', () => {
  const refused: [string, string, KubeconfigPolicy, string][] = [
    ['exec', kubeconfig({}, { exec: EXEC }), STRICT_POLICY, 'users[0].user.exec'],
    ['exec with TLS allowed only', kubeconfig({}, { exec: EXEC }), TLS_ALLOWED, 'users[0].user.exec'],
    [
      'auth-provider',
      kubeconfig({}, { 'auth-provider': { name: 'gcp', config: { 'cmd-path': '/bin/sh' } } }),
      STRICT_POLICY,
      'users[0].user.auth-provider',
    ],
    [
      'token-file',
      kubeconfig({}, { 'token-file': '/var/run/secrets/kubernetes.io/serviceaccount/token' }),
      STRICT_POLICY,
      'users[0].user.token-file',
    ],
    [
      'token-file with exec allowed',
      kubeconfig({}, { 'token-file': '/etc/passwd' }),
      EXEC_ALLOWED,
      'users[0].user.token-file',
    ],
    [
      'client-certificate path',
      kubeconfig({}, { 'client-certificate': '/etc/ssl/c.crt', 'client-key-data': KEY }),
      STRICT_POLICY,
      'users[0].user.client-certificate',
    ],
    [
      'client-key path',
      kubeconfig({}, { 'client-certificate-data': CERT, 'client-key': '/etc/ssl/c.key' }),
      STRICT_POLICY,
      'users[0].user.client-key',
    ],
    [
      'certificate-authority path',
      kubeconfig(
        { 'certificate-authority': '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt' },
        CERT_USER,
      ),
      STRICT_POLICY,
      'clusters[0].cluster.certificate-authority',
    ],
    [
      'insecure-skip-tls-verify',
      kubeconfig({ 'insecure-skip-tls-verify': true }, CERT_USER),
      STRICT_POLICY,
      'clusters[0].cluster.insecure-skip-tls-verify',
    ],
    [
      'insecure-skip-tls-verify with exec allowed',
      kubeconfig({ 'insecure-skip-tls-verify': true }, CERT_USER),
      EXEC_ALLOWED,
      'clusters[0].cluster.insecure-skip-tls-verify',
    ],
    [
      'an http:// server',
      kubeconfig({ server: 'http://10.0.0.1:8080' }, { token: 't' }),
      STRICT_POLICY,
      'clusters[0].cluster.server',
    ],
    [
      'proxy-url',
      kubeconfig({ 'proxy-url': 'socks5://10.0.0.9:1080' }, CERT_USER),
      TLS_ALLOWED,
      'clusters[0].cluster.proxy-url',
    ],
    [
      'basic authentication',
      kubeconfig({}, { username: 'a', password: 'b' }),
      STRICT_POLICY,
      'users[0].user.username',
    ],
    [
      'an unknown user field',
      kubeconfig({}, { token: 't', as: 'system:admin' }),
      STRICT_POLICY,
      'users[0].user.as',
    ],
    [
      'no current-context',
      stringify({ clusters: [], users: [], contexts: [] }),
      STRICT_POLICY,
      'current-context',
    ],
  ];
  it.each(refused)('refuses %s, naming the field', (_name, text, policy, field) => {
    const result = loadUntrustedKubeconfig(text, policy);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.refusals.map((r) => r.field)).toContain(field);
    expect(result.error).toContain(field);
  });

  it('refuses an exec of a user that is not the current one: the whole document is checked', () => {
    const doc = {
      clusters: [{ name: 'c1', cluster: { server: 'https://10.0.0.1:6443' } }],
      users: [
        { name: 'good', user: { token: 't' } },
        { name: 'bad', user: { exec: EXEC } },
      ],
      contexts: [{ name: 'ctx', context: { cluster: 'c1', user: 'good' } }],
      'current-context': 'ctx',
    };
    const result = loadUntrustedKubeconfig(stringify(doc), STRICT_POLICY);
    expect(result.ok ? [] : result.refusals.map((r) => r.field)).toEqual(['users[1].user.exec']);
  });

  it('names each refused field when there are several', () => {
    const result = loadUntrustedKubeconfig(
      kubeconfig({ 'insecure-skip-tls-verify': true }, { exec: EXEC, 'token-file': '/t' }),
      STRICT_POLICY,
    );
    expect(result.ok ? [] : result.refusals.map((r) => r.field).sort()).toEqual([
      'clusters[0].cluster.insecure-skip-tls-verify',
      'users[0].user.exec',
      'users[0].user.token-file',
    ]);
  });

  const accepted: [string, string, KubeconfigPolicy][] = [
    ['client certificate and key data with CA data (Cluster API)', kubeconfig({}, CERT_USER), STRICT_POLICY],
    ['a token with CA data', kubeconfig({}, { token: 'abc' }), STRICT_POLICY],
    ['tls-server-name', kubeconfig({ 'tls-server-name': 'api.internal' }, { token: 'abc' }), STRICT_POLICY],
    [
      'insecure-skip-tls-verify: false',
      kubeconfig({ 'insecure-skip-tls-verify': false }, { token: 'abc' }),
      STRICT_POLICY,
    ],
    ['exec with --insecure-kubeconfig-exec', kubeconfig({}, { exec: EXEC }), EXEC_ALLOWED],
    [
      'auth-provider with --insecure-kubeconfig-exec',
      kubeconfig({}, { 'auth-provider': { name: 'oidc', config: {} } }),
      EXEC_ALLOWED,
    ],
    [
      'insecure-skip-tls-verify with --insecure-kubeconfig-tls',
      kubeconfig({ 'insecure-skip-tls-verify': true }, CERT_USER),
      TLS_ALLOWED,
    ],
    [
      'an http:// server with --insecure-kubeconfig-tls',
      kubeconfig({ server: 'http://10.0.0.1:8080' }, { token: 't' }),
      TLS_ALLOWED,
    ],
  ];
  it.each(accepted)('accepts %s', (_name, text, policy) => {
    const result = loadUntrustedKubeconfig(text, policy);
    if (!result.ok) throw new Error(result.error);
    expect(result.kc.getCurrentCluster()?.server).toMatch(/^https?:\/\/10\.0\.0\.1:(6443|8080)$/);
  });

  it('builds the client from the allowed fields only', () => {
    const result = loadUntrustedKubeconfig(
      kubeconfig({ 'tls-server-name': 'api.internal' }, CERT_USER),
      STRICT_POLICY,
    );
    if (!result.ok) throw new Error(result.error);
    const cluster = result.kc.getCurrentCluster();
    const user = result.kc.getCurrentUser();
    expect(cluster).toEqual({
      name: 'workload',
      server: 'https://10.0.0.1:6443',
      caData: CA,
      tlsServerName: 'api.internal',
      skipTLSVerify: false,
    });
    expect(user).toEqual({ name: 'workload', token: undefined, certData: CERT, keyData: KEY });
  });

  it('hands the inline client certificate, key and CA to TLS, and reads no file', async () => {
    const result = loadUntrustedKubeconfig(kubeconfig({}, CERT_USER), STRICT_POLICY);
    if (!result.ok) throw new Error(result.error);
    const options: { ca?: Buffer; cert?: Buffer; key?: Buffer } = {};
    await result.kc.applyToHTTPSOptions(options);
    expect(options.ca?.toString()).toBe(Buffer.from(CA, 'base64').toString());
    expect(options.cert?.toString()).toBe('client cert');
    expect(options.key?.toString()).toBe('client key');
  });

  it('passes exec on only when allowed', () => {
    const result = loadUntrustedKubeconfig(kubeconfig({}, { exec: EXEC }), EXEC_ALLOWED);
    if (!result.ok) throw new Error(result.error);
    expect(result.kc.getCurrentUser()?.exec).toEqual(EXEC);
  });
});
