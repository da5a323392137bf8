// The roles for people (config/rbac/roles, ADR 0213) on the shared test
// environment's management cluster, checked with kubectl auth can-i as a
// team's user (impersonated): a team given the built-in edit role in its
// namespace edits GatewayDNS there and nowhere else, and cannot create or
// change a DNSZone; capi-dns-admin can. The built-in roles get our rules by
// aggregation, which kube-controller-manager's clusterrole-aggregation
// controller does: it is started here alone (the test environment runs no
// controller-manager), stopped at the end.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { ensureNamespace } from '../support/capi.js';
import { testEnvInfo } from '../support/environment.js';
import { apply, eventually, readManifests } from '../support/kube.js';
import { binPath, repoRoot } from '../support/paths.js';
import { stopChild } from '../support/stop-child.js';
import { clusterOf, kubeConfigOf } from '../support/testenv.js';

const info = testEnvInfo();
const management = kubeConfigOf(info, 'management');
const kubeconfig = clusterOf(info, 'management').kubeconfig;
const TEAM = 'rbac-team-a';
const OTHER = 'rbac-team-b';

/** kubectl auth can-i as `user`: true for "yes". */
function canI(user: string, args: string[]): boolean {
  const res = spawnSync(
    binPath('kubectl'),
    ['--kubeconfig', kubeconfig, 'auth', 'can-i', '--as', user, ...args],
    {
      encoding: 'utf8',
    },
  );
  const answer = res.stdout.trim();
  if (answer !== 'yes' && answer !== 'no') throw new Error(`kubectl auth can-i: ${res.stdout} ${res.stderr}`);
  return answer === 'yes';
}

function binding(namespace: string | undefined, role: string, user: string): KubernetesObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: namespace ? 'RoleBinding' : 'ClusterRoleBinding',
    metadata: { name: `${user}-${role}`, ...(namespace ? { namespace } : {}) },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  } as KubernetesObject;
}

describe('roles for people: GatewayDNS editor and viewer, DNSZone for admins', () => {
  let aggregator: ChildProcess | undefined;

  beforeAll(async () => {
    await apply(
      management,
      readManifests(path.join(repoRoot(), 'config', 'rbac', 'roles', 'gatewaydns-roles.yaml')),
    );
    for (const ns of [TEAM, OTHER]) await ensureNamespace(management, ns);
    await apply(management, [
      binding(TEAM, 'edit', 'alice'),
      binding(TEAM, 'view', 'bob'),
      binding(undefined, 'capi-dns-admin', 'platform-admin'),
    ]);
    aggregator = spawn(
      path.join(repoRoot(), '.cache', 'bin', 'kube-controller-manager'),
      [
        `--kubeconfig=${kubeconfig}`,
        '--controllers=clusterrole-aggregation-controller',
        '--leader-elect=false',
        '--secure-port=0',
      ],
      { stdio: 'ignore' },
    );
    // The built-in edit role has our editor's rules once the controller has aggregated them.
    await eventually(
      async () => {
        if (!canI('alice', ['update', 'gatewaydns.connectivity.tanzu.vmware.com', '-n', TEAM]))
          throw new Error('edit has not aggregated capi-dns-gatewaydns-editor yet');
      },
      30_000,
      250,
    );
  }, 60_000);

  afterAll(async () => {
    if (aggregator) await stopChild(aggregator, 5000);
  });

  it.each([
    [
      'alice (edit in her namespace) creates a GatewayDNS there',
      'alice',
      ['create', 'gatewaydns.connectivity.tanzu.vmware.com', '-n', TEAM],
      true,
    ],
    [
      'alice changes one there',
      'alice',
      ['patch', 'gatewaydns.connectivity.tanzu.vmware.com', '-n', TEAM],
      true,
    ],
    [
      'alice cannot write one in another namespace',
      'alice',
      ['create', 'gatewaydns.connectivity.tanzu.vmware.com', '-n', OTHER],
      false,
    ],
    [
      'alice cannot change one in another namespace',
      'alice',
      ['patch', 'gatewaydns.connectivity.tanzu.vmware.com', '-n', OTHER],
      false,
    ],
    ['alice cannot create a DNSZone', 'alice', ['create', 'dnszones.connectivity.tanzu.vmware.com'], false],
    ['alice cannot change a DNSZone', 'alice', ['patch', 'dnszones.connectivity.tanzu.vmware.com'], false],
    [
      'alice cannot write a GatewayDNS status',
      'alice',
      ['patch', 'gatewaydns.connectivity.tanzu.vmware.com', '--subresource', 'status', '-n', TEAM],
      false,
    ],
    [
      'bob (view) reads GatewayDNS in the namespace',
      'bob',
      ['list', 'gatewaydns.connectivity.tanzu.vmware.com', '-n', TEAM],
      true,
    ],
    [
      'bob cannot change one',
      'bob',
      ['patch', 'gatewaydns.connectivity.tanzu.vmware.com', '-n', TEAM],
      false,
    ],
    [
      'the platform admin creates a DNSZone',
      'platform-admin',
      ['create', 'dnszones.connectivity.tanzu.vmware.com'],
      true,
    ],
    [
      'the platform admin changes a DNSZone',
      'platform-admin',
      ['patch', 'dnszones.connectivity.tanzu.vmware.com'],
      true,
    ],
  ] as const)('%s', (_what, user, args, want) => {
    expect(canI(user, [...args])).toBe(want);
  });
});
