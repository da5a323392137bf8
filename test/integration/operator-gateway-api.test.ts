// spec.gatewayRef on the real API servers of the shared test environment,
// with the Gateway API CRDs (v1.6.3, standard channel, from the Go module)
// installed in both workload clusters, and a real dns-server per cluster
// serving xcc.test and a second zone, apps.corp.internal, checked with dig.
// The test stands in for the Gateway controller no one runs here and writes
// exactly what one writes (test/support/gateway-api.ts): the Gateway's
// addresses and Programmed condition, each route's status.parents.
import type { KubeConfig } from '@kubernetes/client-node';
import { registerWorkloadCluster } from '../support/capi.js';
import { answeredEverywhere, dig, startDnsServer, type DnsProcess } from '../support/dns.js';
import { testEnvInfo } from '../support/environment.js';
import {
  deleteRoute,
  ensureGatewayClass,
  setGatewayStatus,
  setRouteParents,
  writeGateway,
  writeRoute,
  type ListenerSpec,
} from '../support/gateway-api.js';
import { apply, eventually, installCrds, readManifests, statusCode } from '../support/kube.js';
import {
  deleteGatewayDns,
  ensureRecordsNamespace,
  readGatewayDns,
  startOperator,
  waitForReady,
  type OperatorProcess,
} from '../support/operator.js';
import { gatewayApiCrds } from '../support/paths.js';
import { clusterOf, kubeConfigOf } from '../support/testenv.js';

const info = testEnvInfo();
const NS = 'op-gwapi';
const CLUSTERS = ['cluster-a', 'cluster-b'] as const;
const ADDRESS: Record<string, string> = { 'cluster-a': '203.0.113.1', 'cluster-b': '203.0.113.2' };
const ZONE = 'apps.corp.internal';
const EDGE = { namespace: 'infra', name: 'edge' };
const INTERNAL = { namespace: 'infra', name: 'internal' };
const management = kubeConfigOf(info, 'management');
const workload: Record<string, KubeConfig> = {
  'cluster-a': kubeConfigOf(info, 'cluster-a'),
  'cluster-b': kubeConfigOf(info, 'cluster-b'),
};
const LISTENERS: ListenerSpec[] = [
  { name: 'http', port: 80, protocol: 'HTTP' },
  { name: 'https', port: 443, protocol: 'HTTPS', hostname: `*.${ZONE}` },
  { name: 'db', port: 5443, protocol: 'TLS', hostname: `db.${ZONE}` },
];

describe('spec.gatewayRef: a Gateway and its routes, across clusters', () => {
  let op: OperatorProcess;
  const dns: Record<string, DnsProcess> = {};

  /** Waits until every cluster's dns-server answers `want` (an empty list: no address). */
  const everywhere = (name: string, type: string, want: string[]) =>
    answeredEverywhere(dns, name, type, want);

  const acceptedBy = (
    cluster: string,
    kind: 'HTTPRoute' | 'GRPCRoute' | 'TLSRoute',
    name: string,
    parent = EDGE,
    accepted = true,
  ) => setRouteParents(workload[cluster]!, kind, 'shop', name, [{ parentRef: parent, accepted }]);

  beforeAll(async () => {
    const crds = readManifests(gatewayApiCrds('standard'));
    for (const cluster of CLUSTERS) {
      const kc = workload[cluster]!;
      await installCrds(kc, crds);
      await ensureGatewayClass(kc);
      await registerWorkloadCluster(management, {
        namespace: NS,
        cluster,
        kubeconfigPath: clusterOf(info, cluster).kubeconfig,
        labels: { gateways: 'true' },
      });
      await ensureRecordsNamespace(kc);
      await writeGateway(kc, EDGE.namespace, EDGE.name, LISTENERS);
      await setGatewayStatus(kc, EDGE.namespace, EDGE.name, {
        programmed: true,
        addresses: [ADDRESS[cluster]!],
      });
      await writeGateway(kc, INTERNAL.namespace, INTERNAL.name, [
        { name: 'http', port: 80, protocol: 'HTTP' },
      ]);
      await setGatewayStatus(kc, INTERNAL.namespace, INTERNAL.name, {
        programmed: true,
        addresses: ['10.9.9.9'],
      });
    }
    op = await startOperator(clusterOf(info, 'management').kubeconfig, [
      '--namespace',
      NS,
      '--no-leader-elect',
      '--zone',
      ZONE,
    ]);
    for (const cluster of CLUSTERS) {
      dns[cluster] = await startDnsServer(
        ['--zone', 'xcc.test', '--zone', ZONE, '--kubeconfig', clusterOf(info, cluster).kubeconfig],
        { health: true },
      );
    }
    await apply(management, [
      {
        apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
        kind: 'GatewayDNS',
        metadata: { name: 'edge', namespace: NS },
        spec: { clusterSelector: { matchLabels: { gateways: 'true' } }, gatewayRef: EDGE },
      } as never,
    ]);
  });

  afterAll(async () => {
    await deleteGatewayDns(management, NS, 'edge').catch((err: unknown) => {
      if (statusCode(err) !== 404) throw err;
    });
    // The finalizer withdraws the record sets while the operator still runs.
    await eventually(async () => {
      if (await readGatewayDns(management, NS, 'edge')) throw new Error('edge not gone yet');
    }, 15_000).catch(() => undefined);
    await op?.stop();
    await Promise.all(Object.values(dns).map((d) => d.stop()));
    for (const cluster of CLUSTERS)
      for (const [kind, name] of [
        ['HTTPRoute', 'web'],
        ['HTTPRoute', 'outside'],
        ['GRPCRoute', 'api'],
        ['TLSRoute', 'db'],
      ] as const)
        await deleteRoute(workload[cluster]!, kind, 'shop', name);
  });

  it("publishes each cluster's Gateway addresses under its own and the shared names, and the listeners as SRV", async () => {
    await everywhere(`x.gateway.cluster-a.${NS}.clusters.xcc.test`, 'A', [ADDRESS['cluster-a']!]);
    await everywhere(`x.gateway.${NS}.clusters.xcc.test`, 'A', Object.values(ADDRESS));
    await everywhere(`_https._tcp.gateway.cluster-b.${NS}.clusters.xcc.test`, 'SRV', [
      `0 0 443 gateway.cluster-b.${NS}.clusters.xcc.test.`,
    ]);
    const gw = await waitForReady(management, NS, 'edge', 'Ready');
    expect(gw.status?.clusters?.map((c) => [c.cluster, c.state])).toEqual([
      ['cluster-a', 'Ready'],
      ['cluster-b', 'Ready'],
    ]);
  });

  it("answers a route's host name in every cluster with the Gateways that accepted it, in well under a second", async () => {
    await writeRoute(workload['cluster-a']!, 'HTTPRoute', 'shop', 'web', {
      hostnames: [`shop.${ZONE}`],
      parentRefs: [EDGE],
    });
    let began = Date.now();
    await acceptedBy('cluster-a', 'HTTPRoute', 'web');
    await everywhere(`shop.${ZONE}`, 'A', [ADDRESS['cluster-a']!]);
    const first = Date.now() - began;
    await writeRoute(workload['cluster-b']!, 'HTTPRoute', 'shop', 'web', {
      hostnames: [`shop.${ZONE}`],
      parentRefs: [EDGE],
    });
    began = Date.now();
    await acceptedBy('cluster-b', 'HTTPRoute', 'web');
    await everywhere(`shop.${ZONE}`, 'A', Object.values(ADDRESS));
    const second = Date.now() - began;
    // The bound is the issue's; the bench measures the distribution (bench/gateway-routes.ts).
    expect(Math.min(first, second)).toBeLessThan(1000);
  });

  it('serves the second zone by the RFCs: its own SOA at the apex, NXDOMAIN for a name that is not there, NODATA for a type that is not', async () => {
    const soa = await dig(dns['cluster-b']!.port, [ZONE, 'SOA']);
    expect(soa.status).toBe('NOERROR');
    expect(soa.answer.join('\n')).toMatch(new RegExp(`^${ZONE}\\. \\d+ IN SOA ns1\\.${ZONE}\\.`));
    const ns = await dig(dns['cluster-b']!.port, [ZONE, 'NS']);
    expect(ns.answer.join('\n')).toMatch(new RegExp(`^${ZONE}\\. \\d+ IN NS `));
    const missing = await dig(dns['cluster-b']!.port, [`nothere.${ZONE}`, 'A']);
    expect(missing.status).toBe('NXDOMAIN');
    expect(missing.authority.join('\n')).toMatch(new RegExp(`^${ZONE}\\. \\d+ IN SOA`));
    const noData = await dig(dns['cluster-b']!.port, [`shop.${ZONE}`, 'AAAA']);
    expect([noData.status, noData.answer.length]).toEqual(['NOERROR', 0]);
    expect(noData.flags).toContain('aa');
  });

  it('withdraws a route refused by its parent, moved to another Gateway, or deleted', async () => {
    await everywhere(`shop.${ZONE}`, 'A', Object.values(ADDRESS));
    // Refused by cluster-b's Gateway (its listeners no longer allow it, say).
    await acceptedBy('cluster-b', 'HTTPRoute', 'web', EDGE, false);
    await everywhere(`shop.${ZONE}`, 'A', [ADDRESS['cluster-a']!]);
    // Moved to another Gateway in cluster-a, which accepts it there: not edge's any more.
    await writeRoute(workload['cluster-a']!, 'HTTPRoute', 'shop', 'web', {
      hostnames: [`shop.${ZONE}`],
      parentRefs: [INTERNAL],
    });
    await acceptedBy('cluster-a', 'HTTPRoute', 'web', INTERNAL);
    await everywhere(`shop.${ZONE}`, 'A', []);
    expect((await dig(dns['cluster-a']!.port, [`shop.${ZONE}`, 'A'])).status).toBe('NXDOMAIN');
    // Back on edge, then deleted in both clusters.
    await writeRoute(workload['cluster-a']!, 'HTTPRoute', 'shop', 'web', {
      hostnames: [`shop.${ZONE}`],
      parentRefs: [EDGE],
    });
    await acceptedBy('cluster-a', 'HTTPRoute', 'web');
    await everywhere(`shop.${ZONE}`, 'A', [ADDRESS['cluster-a']!]);
    for (const cluster of CLUSTERS) await deleteRoute(workload[cluster]!, 'HTTPRoute', 'shop', 'web');
    await everywhere(`shop.${ZONE}`, 'A', []);
  });

  it("narrows a route's names to its listener's, and lists a name outside every served zone as not served", async () => {
    // On the https listener (*.apps.corp.internal): api.example.com falls outside it and is not the route's there.
    await writeRoute(workload['cluster-a']!, 'GRPCRoute', 'shop', 'api', {
      hostnames: [`api.${ZONE}`, 'api.example.com'],
      parentRefs: [{ ...EDGE, sectionName: 'https' }],
    });
    await setRouteParents(workload['cluster-a']!, 'GRPCRoute', 'shop', 'api', [
      { parentRef: { ...EDGE, sectionName: 'https' }, accepted: true },
    ]);
    await everywhere(`api.${ZONE}`, 'A', [ADDRESS['cluster-a']!]);
    // On the http listener (no host name): www.example.com is the route's, but no dns-server serves it.
    await writeRoute(workload['cluster-a']!, 'HTTPRoute', 'shop', 'outside', {
      hostnames: ['www.example.com'],
      parentRefs: [{ ...EDGE, sectionName: 'http' }],
    });
    await setRouteParents(workload['cluster-a']!, 'HTTPRoute', 'shop', 'outside', [
      { parentRef: { ...EDGE, sectionName: 'http' }, accepted: true },
    ]);
    const gw = await eventually(async () => {
      const got = await readGatewayDns(management, NS, 'edge');
      const hostnames = got?.status?.conditions?.find((c) => c.type === 'HostnamesAccepted');
      if (hostnames?.reason !== 'Invalid') throw new Error(`HostnamesAccepted ${hostnames?.reason}`);
      return hostnames;
    });
    expect(gw.message).toContain(`www.example.com (outside the zones served (xcc.test, ${ZONE}))`);
    expect(gw.message).not.toContain('api.example.com');
  });

  it('publishes a TLSRoute (v1, standard channel since Gateway API v1.5) on the TLS listener', async () => {
    // TLSRoute v1 requires host names; *.apps.corp.internal narrows to the TLS listener's db.apps.corp.internal.
    await writeRoute(workload['cluster-b']!, 'TLSRoute', 'shop', 'db', {
      hostnames: [`*.${ZONE}`],
      parentRefs: [EDGE],
    });
    await acceptedBy('cluster-b', 'TLSRoute', 'db');
    await everywhere(`db.${ZONE}`, 'A', [ADDRESS['cluster-b']!]);
  });

  it('takes a Gateway that is no longer Programmed out of every name, and says so', async () => {
    const kc = workload['cluster-b']!;
    await setGatewayStatus(kc, EDGE.namespace, EDGE.name, { programmed: false, addresses: [] });
    try {
      await everywhere(`x.gateway.${NS}.clusters.xcc.test`, 'A', [ADDRESS['cluster-a']!]);
      await everywhere(`db.${ZONE}`, 'A', []);
      const gw = await eventually(async () => {
        const got = await readGatewayDns(management, NS, 'edge');
        const b = got?.status?.clusters?.find((c) => c.cluster === 'cluster-b') as
          { state: string; message?: string } | undefined;
        if (b?.state !== 'GatewayNotProgrammed') throw new Error(`cluster-b: ${b?.state}`);
        return b;
      });
      expect(gw.message).toContain('not Programmed (False, AddressNotAssigned');
    } finally {
      await setGatewayStatus(kc, EDGE.namespace, EDGE.name, {
        programmed: true,
        addresses: [ADDRESS['cluster-b']!],
      });
    }
    await everywhere(`db.${ZONE}`, 'A', [ADDRESS['cluster-b']!]);
  });
});
