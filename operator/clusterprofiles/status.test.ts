import type { ClusterProfile } from '../../api/index.js';
import { accessProviderOf, isOurs, profileObject, profileUpToDate } from './desired.js';
import { controlPlaneHealthy, profileStatus, propertiesOf } from './status.js';

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
- name: w1
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: Q0E=
contexts:
- name: w1-admin@w1
  context: {cluster: w1, user: w1-admin}
current-context: w1-admin@w1
users:
- name: w1-admin
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
`;

const ref = { namespace: 'fleet', name: 'w1', uid: 'uid-1' };
const now = new Date('2026-11-27T20:00:00Z');

describe('the ClusterProfile object', () => {
  it("is the Cluster's name in its namespace, owned by it, labelled and naming the cluster manager", () => {
    const p = profileObject(ref, 'cluster-api');
    expect(p.metadata).toMatchObject({
      name: 'w1',
      namespace: 'fleet',
      labels: { 'x-k8s.io/cluster-manager': 'cluster-api' },
      ownerReferences: [
        {
          apiVersion: 'cluster.x-k8s.io/v1beta2',
          kind: 'Cluster',
          name: 'w1',
          uid: 'uid-1',
          controller: true,
        },
      ],
    });
    expect(p.spec.clusterManager.name).toBe('cluster-api');
    expect(profileUpToDate(p, ref, 'cluster-api')).toBe(true);
    expect(profileUpToDate(p, { ...ref, uid: 'uid-2' }, 'cluster-api')).toBe(false);
  });

  it("another cluster manager's profile of the same name is not ours", () => {
    const ocm: ClusterProfile = {
      metadata: {
        name: 'w1',
        namespace: 'fleet',
        labels: { 'x-k8s.io/cluster-manager': 'open-cluster-management' },
      },
      spec: { clusterManager: { name: 'open-cluster-management' } },
    };
    expect(isOurs(ocm, ref, 'cluster-api')).toBe(false);
    expect(isOurs(profileObject(ref, 'cluster-api'), ref, 'cluster-api')).toBe(true);
    // Left by a Cluster of the same name deleted and created again: ours by label and spec, taken over.
    expect(isOurs(profileObject({ ...ref, uid: 'old' }, 'cluster-api'), ref, 'cluster-api')).toBe(true);
  });
});

describe('the access provider', () => {
  it('carries the server and CA, and names the kubeconfig Secret; never a credential', () => {
    const got = accessProviderOf(ref, KUBECONFIG);
    expect(got).toEqual({
      provider: {
        name: 'kubeconfig-secretreader',
        cluster: {
          server: 'https://10.0.0.1:6443',
          'certificate-authority-data': 'Q0E=',
          extensions: [
            {
              name: 'client.authentication.k8s.io/exec',
              extension: { name: 'w1-kubeconfig', key: 'value', namespace: 'fleet' },
            },
          ],
        },
      },
    });
    expect(JSON.stringify(got)).not.toMatch(/Q0VSVA|S0VZ/);
  });

  it('refuses a kubeconfig that asks for exec or a file, as the plugin would', () => {
    const exec = KUBECONFIG.replace(/client-certificate-data[^]*$/, 'exec: {command: /bin/sh}\n');
    expect(accessProviderOf(ref, exec)).toMatchObject({
      refused: true,
      problem: expect.stringMatching(/exec/),
    });
  });
});

describe('the status', () => {
  const access = accessProviderOf(ref, KUBECONFIG);
  const base = { clusterName: 'w1', clusterConditions: [], access, now };

  it('ControlPlaneHealthy follows ControlPlaneAvailable; a failing probe wins; none reported is Unknown', () => {
    expect(controlPlaneHealthy([{ type: 'ControlPlaneAvailable', status: 'True' }]).status).toBe('True');
    expect(
      controlPlaneHealthy([{ type: 'ControlPlaneAvailable', status: 'False', reason: 'X' }]),
    ).toMatchObject({ status: 'False', reason: 'ControlPlaneNotAvailable' });
    expect(
      controlPlaneHealthy([
        { type: 'ControlPlaneAvailable', status: 'True' },
        { type: 'RemoteConnectionProbe', status: 'False', message: 'timeout' },
      ]),
    ).toMatchObject({ status: 'False', reason: 'RemoteConnectionProbeFailed' });
    expect(controlPlaneHealthy([]).status).toBe('Unknown');
  });

  it('Joined is True with an access provider, False while provisioning or without a kubeconfig', () => {
    const joined = (s: ReturnType<typeof profileStatus>) => s.conditions?.find((c) => c.type === 'Joined');
    expect(joined(profileStatus(base))).toMatchObject({ status: 'True', reason: 'Joined' });
    expect(joined(profileStatus({ ...base, notConnectableYet: 'not provisioned' }))).toMatchObject({
      status: 'False',
      reason: 'Provisioning',
    });
    const none = profileStatus({ ...base, access: { problem: 'no kubeconfig: Secret fleet/w1-kubeconfig' } });
    expect(joined(none)).toMatchObject({ status: 'False', reason: 'NoKubeconfig' });
    expect(none.accessProviders).toBeUndefined();
  });

  it('carries the version and, in a ClusterSet, both KEP-2149 properties', () => {
    const s = profileStatus({ ...base, clusterSet: 'blue', kubernetesVersion: 'v1.35.0' });
    expect(s.version).toEqual({ kubernetes: 'v1.35.0' });
    expect(s.properties).toEqual([
      { name: 'cluster.clusterset.k8s.io', value: 'w1', lastObservedTime: now.toISOString() },
      { name: 'clusterset.k8s.io', value: 'blue', lastObservedTime: now.toISOString() },
    ]);
    expect(profileStatus(base).properties).toBeUndefined();
  });

  it('is the same status when nothing changed (no write), times kept', () => {
    const first = profileStatus({ ...base, clusterSet: 'blue', kubernetesVersion: 'v1.35.0' });
    const later = new Date(now.getTime() + 60_000);
    const again = profileStatus({ ...base, clusterSet: 'blue', previous: first, now: later });
    expect(again).toEqual(first);
    expect(propertiesOf('w1', 'green', first.properties ?? [], later)[1]).toEqual({
      name: 'clusterset.k8s.io',
      value: 'green',
      lastObservedTime: later.toISOString(),
    });
  });
});
