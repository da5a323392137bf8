import { parse } from 'yaml';
import type { ClusterProfile, ProfileCluster } from '../../../api/index.js';
import { accessPlanOf, kubeconfigFromSecret } from './profile-access.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

function profile(
  providers: { name: string; cluster?: ProfileCluster }[],
  namespace = 'fleet',
): ClusterProfile {
  return {
    metadata: { name: 'spoke-1', namespace },
    spec: { clusterManager: { name: 'open-cluster-management' } },
    status: { accessProviders: providers },
  };
}

const server = { server: 'https://10.1.0.1:6443', 'certificate-authority-data': b64('CA') };
const exec = (extension: Record<string, unknown>) => ({
  name: 'client.authentication.k8s.io/exec',
  extension,
});
const NONE = new Set<string>();

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: 'https://elsewhere:6443'}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}, {name: other, context: {cluster: c, user: v}}]
current-context: ctx
users:
- {name: u, user: {token: secret-token}}
- {name: v, user: {client-certificate-data: Q0VSVA==, client-key-data: S0VZ}}
`;

describe('ClusterProfile credentials in process', () => {
  it('kubeconfig-secretreader: the Secret of the extension, in the profile namespace by default; server and CA from the profile', () => {
    const plan = accessPlanOf(
      profile([
        {
          name: 'kubeconfig-secretreader',
          cluster: { ...server, extensions: [exec({ name: 'k', key: 'value' })] },
        },
      ]),
      NONE,
    );
    expect(plan).toMatchObject({
      kind: 'kubeconfig',
      secret: { namespace: 'fleet', name: 'k' },
      key: 'value',
    });
    if (!('kind' in plan) || plan.kind !== 'kubeconfig') throw new Error(JSON.stringify(plan));
    const built = kubeconfigFromSecret(plan, { value: b64(KUBECONFIG) });
    if ('problem' in built) throw new Error(built.problem);
    const doc = parse(built.text) as { clusters: { cluster: object }[]; users: { user: object }[] };
    expect(doc.clusters[0]?.cluster).toEqual(server);
    expect(doc.users[0]?.user).toEqual({ token: 'secret-token' });
    // Another context: inline client certificate only.
    const other = kubeconfigFromSecret({ ...plan, context: 'other' }, { value: b64(KUBECONFIG) });
    expect('text' in other && (parse(other.text) as { users: { user: object }[] }).users[0]?.user).toEqual({
      'client-certificate-data': 'Q0VSVA==',
      'client-key-data': 'S0VZ',
    });
  });

  it('secretreader: a token from Secret <namespace>/<clusterName>, key token', () => {
    const plan = accessPlanOf(
      profile([
        { name: 'secretreader', cluster: { ...server, extensions: [exec({ clusterName: 'spoke-1' })] } },
      ]),
      NONE,
    );
    expect(plan).toMatchObject({
      kind: 'token',
      secret: { namespace: 'fleet', name: 'spoke-1' },
      key: 'token',
    });
    if ('problem' in plan) throw new Error(plan.problem);
    const built = kubeconfigFromSecret(plan, { token: b64('tok\n') });
    expect('text' in built && (parse(built.text) as { users: { user: object }[] }).users[0]?.user).toEqual({
      token: 'tok',
    });
  });

  it.each([
    [
      'an exec plugin capi-dns does not run',
      [{ name: 'gke-fleet', cluster: server }],
      /no access provider capi-dns implements in process.*gke-fleet/,
    ],
    [
      'additional-args',
      [
        {
          name: 'kubeconfig-secretreader',
          cluster: {
            ...server,
            extensions: [
              exec({ name: 'k', key: 'value' }),
              { name: 'clusterprofiles.multicluster.x-k8s.io/exec/additional-args', extension: {} },
            ],
          },
        },
      ],
      /additional-args is not accepted/,
    ],
    [
      'a Secret in another namespace',
      [
        {
          name: 'kubeconfig-secretreader',
          cluster: { ...server, extensions: [exec({ name: 'k', key: 'value', namespace: 'kube-system' })] },
        },
      ],
      /kube-system is not the profile's \(fleet\)/,
    ],
    [
      'a CA file path',
      [
        {
          name: 'secretreader',
          cluster: {
            server: server.server,
            'certificate-authority': '/etc/ca',
            extensions: [exec({ clusterName: 'x' })],
          },
        },
      ],
      /certificate-authority: a file path/,
    ],
    [
      'insecure-skip-tls-verify',
      [
        {
          name: 'secretreader',
          cluster: {
            server: server.server,
            'insecure-skip-tls-verify': true,
            extensions: [exec({ clusterName: 'x' })],
          },
        },
      ],
      /insecure-skip-tls-verify/,
    ],
  ])('refuses %s, saying why', (_what, providers, why) => {
    const plan = accessPlanOf(profile(providers), NONE);
    expect('problem' in plan && plan.problem).toMatch(why);
  });

  it('a Secret in another namespace is read where a flag allows it', () => {
    const plan = accessPlanOf(
      profile([
        {
          name: 'kubeconfig-secretreader',
          cluster: { ...server, extensions: [exec({ name: 'k', key: 'v', namespace: 'creds' })] },
        },
      ]),
      new Set(['creds']),
    );
    expect(plan).toMatchObject({ secret: { namespace: 'creds', name: 'k' } });
  });

  it('refuses a kubeconfig in the Secret that asks for exec or a file, or has no credential', () => {
    const plan = accessPlanOf(
      profile([
        {
          name: 'kubeconfig-secretreader',
          cluster: { ...server, extensions: [exec({ name: 'k', key: 'value' })] },
        },
      ]),
      NONE,
    );
    if ('problem' in plan) throw new Error(plan.problem);
    const execUser = KUBECONFIG.replace('{token: secret-token}', '{exec: {command: /bin/sh}}');
    expect(kubeconfigFromSecret(plan, { value: b64(execUser) })).toMatchObject({
      problem: expect.stringMatching(/exec/),
    });
    const fileUser = KUBECONFIG.replace('{token: secret-token}', '{token-file: /var/run/token}');
    expect(kubeconfigFromSecret(plan, { value: b64(fileUser) })).toMatchObject({
      problem: expect.stringMatching(/token-file/),
    });
    const empty = KUBECONFIG.replace('{token: secret-token}', '{}');
    expect(kubeconfigFromSecret(plan, { value: b64(empty) })).toMatchObject({
      problem: expect.stringMatching(/neither a token/),
    });
    expect(kubeconfigFromSecret(plan, {})).toMatchObject({
      problem: expect.stringMatching(/missing or empty/),
    });
  });
});
