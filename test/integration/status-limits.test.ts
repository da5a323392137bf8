// A status that names a whole fleet is accepted by a real API server: 1,000
// clusters, every one failing with a long error, as a management cluster that
// loses its network to its workload clusters would see them. The conditions
// summarise (counts and the first few by name), status.clusters[] names every
// cluster with its own capped error, and the merge patch the reconciler sends
// is not refused, so the status never goes stale for being too long.
import {
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
} from '@kubernetes/client-node';
import type { GatewayDNSStatus } from '../../api/index.js';
import type { ClusterFacts } from '../../operator/model/facts.js';
import { statusFor, type TargetOutcome } from '../../operator/gatewaydns/status/status.js';
import { withMirrorStatus } from '../../operator/gatewaydns/apply/mirror/status.js';
import { ensureNamespace } from '../support/capi.js';
import { testEnvInfo } from '../support/environment.js';
import { apply } from '../support/kube.js';
import { kubeConfigOf } from '../support/testenv.js';

const NS = 'fleet-status';
const GROUP = { group: 'connectivity.tanzu.vmware.com', version: 'v1alpha1', plural: 'gatewaydns' };
const CLUSTERS = Array.from({ length: 1_000 }, (_, i) => `cluster-${String(i).padStart(4, '0')}`);
/** What a write that timed out says, made long the way a wrapped Go error chain can be. */
const LONG_ERROR = `Put "https://10.20.30.40:6443/apis/connectivity.tanzu.vmware.com/v1alpha1/namespaces/capi-dns/dnsrecordsets/x": ${'context deadline exceeded (Client.Timeout exceeded while awaiting headers); '.repeat(40)}`;

describe('status at fleet scale', () => {
  const kc = kubeConfigOf(testEnvInfo(), 'management');
  const custom = kc.makeApiClient(CustomObjectsApi);

  beforeAll(async () => {
    await ensureNamespace(kc, NS);
    await apply(kc, [
      {
        apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
        kind: 'GatewayDNS',
        metadata: { name: 'fleet', namespace: NS },
        spec: {
          clusterSelector: { matchLabels: { fleet: 'true' } },
          service: 'projectcontour/envoy',
          resolutionType: 'loadBalancer',
          mirror: {},
        },
      } as KubernetesObject,
    ]);
  });

  afterAll(async () => {
    await custom
      .deleteNamespacedCustomObject({ ...GROUP, namespace: NS, name: 'fleet' })
      .catch(() => undefined);
  });

  it('1,000 failing clusters: summarised in the conditions, each named in status.clusters[], patch accepted', async () => {
    const facts: ClusterFacts[] = CLUSTERS.map((cluster) => ({
      cluster,
      state: 'Unreachable',
      addresses: ['192.0.2.10'],
      ports: [],
      error: LONG_ERROR,
    }));
    const targets: TargetOutcome[] = CLUSTERS.map((cluster) => ({
      cluster,
      result: 'failed',
      error: LONG_ERROR,
    }));
    const now = new Date();
    const base = statusFor({
      generation: 1,
      previous: undefined,
      facts,
      conflict: { lostDomains: [], with: [] },
      targets,
      now,
    });
    const status: GatewayDNSStatus = withMirrorStatus(
      base,
      undefined,
      {
        service: 'projectcontour/envoy',
        outcomes: CLUSTERS.map((cluster) => ({
          cluster,
          service: 'projectcontour/envoy',
          state: 'Unreachable',
          writes: 0,
          message: LONG_ERROR,
        })),
        unreachableSources: CLUSTERS,
      },
      1,
      now,
    );

    // The same request as the reconciler's status write (a merge patch of the status subresource).
    await custom.patchNamespacedCustomObjectStatus(
      { ...GROUP, namespace: NS, name: 'fleet', body: { status } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );

    const stored = (await custom.getNamespacedCustomObject({ ...GROUP, namespace: NS, name: 'fleet' })) as {
      status: GatewayDNSStatus;
    };
    const ready = stored.status.conditions?.find((c) => c.type === 'Ready');
    expect(ready).toMatchObject({ status: 'False', reason: 'ClusterUnreachable' });
    expect(ready?.message).toMatch(
      /^1000 of 1000 selected clusters unreachable, last known addresses kept: cluster-0000 \(source: Put .*…\); cluster-0001 .*; and 997 more; 1000 of 1000 workload clusters not written: /,
    );
    const mirrored = stored.status.conditions?.find((c) => c.type === 'Mirrored');
    expect(mirrored?.message).toMatch(
      /cluster-0002 \(consumer: .*…\); and 997 more; unreachable: cluster-0000, cluster-0001, cluster-0002 and 997 more \(source: /,
    );
    expect(stored.status.clusters?.map((c) => c.cluster)).toEqual(CLUSTERS);
    expect(stored.status.mirrors).toHaveLength(1_000);
    for (const c of stored.status.clusters ?? []) expect(c.lastError).toMatch(/^Put "https:.*…$/);
    process.stderr.write(
      `fleet status: ${Buffer.byteLength(JSON.stringify(stored.status))} bytes for 1,000 clusters; Ready message ${Buffer.byteLength(ready?.message ?? '')} bytes\n`,
    );
  });
});
