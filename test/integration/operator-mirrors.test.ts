// spec.mirror on an environment of its own (it stops an API server): a real
// CoreDNS with its kubernetes plugin, pointed at a consuming cluster's API
// server, answers <name>.<namespace>.svc.cluster.local from the Service and
// EndpointSlices the operator keeps there. The test API servers run no
// controllers: a Service gets its cluster IP from the API server's allocator,
// but nothing else writes EndpointSlices, so every address CoreDNS answers
// comes from ours. The source slices are written as the EndpointSlice
// controller would (test/support/endpointslices.ts).
//
// Clusters: east and west are selected (label role=source) and have the
// Services; edge only consumes; other belongs to another management
// namespace and must never get a mirror.
import path from 'node:path';
import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
  type V1EndpointSlice,
  type V1Service,
} from '@kubernetes/client-node';
import { ensureNamespace, registerWorkloadCluster } from '../support/capi.js';
import { dig, startCoreDns, type DnsProcess } from '../support/dns.js';
import { writeEndpointSlice, type TestEndpoint } from '../support/endpointslices.js';
import { apply, eventually, installCrds, readManifests, statusCode } from '../support/kube.js';
import {
  deleteGatewayDns,
  readGatewayDns,
  runOperatorToExit,
  setLoadBalancer,
  startOperator,
  type OperatorProcess,
} from '../support/operator.js';
import { repoRoot } from '../support/paths.js';
import { startCluster, stopCluster, TestEnv } from '../support/testenv.js';

const NS = 'shop';
const OTHER_NS = 'other-team';
const APPS = 'apps';
const SOURCES = ['east', 'west'] as const;
const CONSUMER = 'edge';
const OTHER = 'other';
const ALL = [...SOURCES, CONSUMER, OTHER];

interface MirrorEntry {
  cluster: string;
  state: string;
  service: string;
  message?: string;
  endpointSlices?: number;
}
interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

function gatewayDns(name: string, spec: Record<string, unknown>): KubernetesObject {
  return {
    apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
    kind: 'GatewayDNS',
    metadata: { name, namespace: NS },
    spec: { clusterSelector: { matchLabels: { role: 'source' } }, ...spec },
  } as KubernetesObject;
}

/** Median under a second and no sample over two: the issue's bound on a shared 2-core machine (as operator-services does). */
function expectWithinASecond(times: number[]): void {
  const sorted = [...times].sort((a, b) => a - b);
  expect(sorted[Math.floor((sorted.length - 1) / 2)]).toBeLessThan(1000);
  expect(sorted[sorted.length - 1]).toBeLessThan(2000);
}

describe('mirrors: a remote Service as a local Service with EndpointSlices', () => {
  let env: TestEnv;
  let op: OperatorProcess | undefined;
  let coredns: DnsProcess;
  const kc = (cluster: string): KubeConfig => env.kubeConfig(cluster);
  const operatorArgs = ['--no-leader-elect', '--no-manage-corefiles'];

  const services = (cluster: string) => kc(cluster).makeApiClient(CoreV1Api);
  const slicesIn = async (cluster: string, service: string): Promise<V1EndpointSlice[]> =>
    (
      await kc(cluster)
        .makeApiClient(DiscoveryV1Api)
        .listNamespacedEndpointSlice({
          namespace: APPS,
          labelSelector: `kubernetes.io/service-name=${service}`,
        })
    ).items.sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  const readService = async (cluster: string, name: string): Promise<V1Service | undefined> => {
    try {
      return await services(cluster).readNamespacedService({ name, namespace: APPS });
    } catch (err) {
      if (statusCode(err) === 404) return undefined;
      throw err;
    }
  };
  /** "name: address(ready) …" per slice: what the consuming cluster's slices hold. */
  const sliceSummary = async (cluster: string, service: string): Promise<string[]> =>
    (await slicesIn(cluster, service)).map(
      (s) =>
        `${s.metadata?.name}: ${(s.endpoints ?? [])
          .map(
            (e) =>
              `${e.hostname ? `${e.hostname}=` : ''}${e.addresses[0]}${e.conditions?.ready === false ? '(not ready)' : ''}`,
          )
          .sort()
          .join(' ')}`,
    );
  const waitForSlices = (
    cluster: string,
    service: string,
    want: string[],
    timeoutMs = 10_000,
    intervalMs = 50,
  ) =>
    eventually(
      async () => {
        const got = await sliceSummary(cluster, service);
        if (JSON.stringify(got) !== JSON.stringify(want))
          throw new Error(`${cluster} ${service}: got\n  ${got.join('\n  ')}\nwant\n  ${want.join('\n  ')}`);
      },
      timeoutMs,
      intervalMs,
    );
  const answer = async (name: string, type = 'A') =>
    (await dig(coredns.port, ['+short', name, type])).stdout.trim().split('\n').filter(Boolean).sort();
  const waitForAnswer = (name: string, want: string[], type = 'A', timeoutMs = 10_000) =>
    eventually(
      async () => {
        const got = await answer(name, type);
        if (JSON.stringify(got) !== JSON.stringify([...want].sort()))
          throw new Error(`${name} ${type}: got ${got.join(' ')}, want ${want.join(' ')}`);
      },
      timeoutMs,
      20,
    );
  const mirrorStatus = async (name: string) => {
    const gw = await readGatewayDns(kc('management'), NS, name);
    const status = gw?.status as { mirrors?: MirrorEntry[]; conditions?: Condition[] } | undefined;
    return {
      generation: gw?.metadata.generation,
      observed: gw?.status?.observedGeneration,
      mirrors: status?.mirrors ?? [],
      mirrored: status?.conditions?.find((c) => c.type === 'Mirrored'),
    };
  };
  const waitForMirrored = (name: string, reason: string, timeoutMs = 15_000) =>
    eventually(
      async () => {
        const s = await mirrorStatus(name);
        if (s.mirrored?.reason !== reason || s.observed !== s.generation)
          throw new Error(
            `gatewaydns ${name}: Mirrored ${s.mirrored?.status}/${s.mirrored?.reason} (${s.mirrored?.message}), want ${reason}`,
          );
        return s;
      },
      timeoutMs,
      100,
    );

  const dbPods = {
    east: (address0 = '10.10.0.1'): TestEndpoint[] => [
      { pod: 'db-0', address: address0, hostname: 'db-0' },
      { pod: 'db-1', address: '10.10.0.2', hostname: 'db-1', ready: false },
    ],
    west: (): TestEndpoint[] => [{ pod: 'db-2', address: '10.20.0.1', hostname: 'db-2' }],
  };
  const writeDbSlice = (cluster: 'east' | 'west', endpoints: TestEndpoint[]) =>
    writeEndpointSlice(kc(cluster), {
      namespace: APPS,
      service: 'db',
      name: 'db-abcde',
      addressType: 'IPv4',
      endpoints,
      ports: [{ name: 'pg', port: 5432 }],
    });

  beforeAll(async () => {
    env = await TestEnv.start({ workloadClusters: ALL });
    const ours = readManifests(path.join(repoRoot(), 'crds'));
    await installCrds(kc('management'), [
      ...ours,
      ...readManifests(path.join(repoRoot(), 'test', 'fixtures')),
    ]);
    for (const cluster of ALL) {
      await registerWorkloadCluster(kc('management'), {
        namespace: cluster === OTHER ? OTHER_NS : NS,
        cluster,
        kubeconfigPath: env.cluster(cluster).kubeconfig,
        labels: (SOURCES as readonly string[]).includes(cluster) ? { role: 'source' } : {},
      });
      // Every cluster has the namespace, the other team's too: only tenancy keeps the mirror out of it.
      await ensureNamespace(kc(cluster), APPS);
    }
    for (const cluster of SOURCES) {
      await services(cluster).createNamespacedService({
        namespace: APPS,
        body: {
          metadata: { name: 'db' },
          spec: {
            clusterIP: 'None',
            selector: { app: 'db' },
            ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }],
          },
        },
      });
      await writeDbSlice(cluster, dbPods[cluster]());
    }
    coredns = await startCoreDns(
      [
        '.:{port} {',
        '    bind 127.0.0.1',
        '    kubernetes cluster.local {',
        `        kubeconfig ${env.cluster(CONSUMER).kubeconfig}`,
        '    }',
        '}',
        '',
      ].join('\n'),
      'cluster.local',
    );
    op = await startOperator(env.cluster('management').kubeconfig, operatorArgs);
  }, 240_000);

  afterAll(async () => {
    await op?.stop();
    await coredns?.stop();
    await env?.stop();
  }, 60_000);

  it('headless: the pods of both source clusters in the consuming cluster, answered by its CoreDNS, per-pod names included', async () => {
    await apply(kc('management'), [
      gatewayDns('db', { service: `${APPS}/db`, resolutionType: 'headless', mirror: {} }),
    ]);
    await waitForSlices(CONSUMER, 'db', [
      'db.east: db-0=10.10.0.1 db-1=10.10.0.2(not ready)',
      'db.west: db-2=10.20.0.1',
    ]);
    const mirror = await readService(CONSUMER, 'db');
    expect(mirror?.spec?.clusterIP).toBe('None');
    expect(mirror?.spec?.selector).toBeUndefined();
    expect(mirror?.spec?.ports).toEqual([{ name: 'pg', port: 5432, protocol: 'TCP', targetPort: 5432 }]);
    const [east] = await slicesIn(CONSUMER, 'db');
    expect(east?.metadata?.labels).toMatchObject({
      'kubernetes.io/service-name': 'db',
      'endpointslice.kubernetes.io/managed-by': 'capi-dns-controller.connectivity.tanzu.vmware.com',
      'multicluster.kubernetes.io/source-cluster': 'east',
    });
    expect(east?.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'Service',
      name: 'db',
      uid: mirror?.metadata?.uid,
    });

    // CoreDNS answers the ready pods only, as the cluster's own DNS does, and the per-pod name.
    await waitForAnswer(`db.${APPS}.svc.cluster.local`, ['10.10.0.1', '10.20.0.1']);
    await waitForAnswer(`db-0.db.${APPS}.svc.cluster.local`, ['10.10.0.1']);
    await waitForAnswer(`db-2.db.${APPS}.svc.cluster.local`, ['10.20.0.1']);

    const s = await waitForMirrored('db', 'InPlace');
    expect(s.mirrored?.status).toBe('True');
    expect(s.mirrors).toEqual([
      {
        cluster: 'east',
        state: 'SourceCluster',
        service: 'apps/db',
        message: 'a selected cluster: apps/db is the source Service itself',
      },
      { cluster: 'edge', state: 'InPlace', service: 'apps/db', endpointSlices: 2 },
      {
        cluster: 'west',
        state: 'SourceCluster',
        service: 'apps/db',
        message: 'a selected cluster: apps/db is the source Service itself',
      },
    ]);
    // The source Services are not touched: no labels of ours, no mirror slices beside them.
    for (const cluster of SOURCES) {
      expect((await readService(cluster, 'db'))?.metadata?.labels ?? {}).toEqual({});
      expect((await slicesIn(cluster, 'db')).map((x) => x.metadata?.name)).toEqual(['db-abcde']);
    }
    // Tenancy: the other team's cluster has the namespace and gets nothing.
    expect(await readService(OTHER, 'db')).toBeUndefined();
    expect(await slicesIn(OTHER, 'db')).toEqual([]);
  });

  it('a changed source address reaches the consuming cluster within a second, and its CoreDNS', async () => {
    const times: number[] = [];
    for (let i = 1; i <= 6; i++) {
      const address = `10.10.1.${i}`;
      const began = Date.now();
      await writeDbSlice('east', dbPods.east(address));
      await waitForSlices(
        CONSUMER,
        'db',
        [`db.east: db-0=${address} db-1=10.10.0.2(not ready)`, 'db.west: db-2=10.20.0.1'],
        10_000,
        10,
      );
      times.push(Date.now() - began);
      await waitForAnswer(`db-0.db.${APPS}.svc.cluster.local`, [address]);
    }
    process.stderr.write(`mirror propagation, source slice → consuming slice: ${times.join(', ')} ms\n`);
    expectWithinASecond(times);
    // Readiness follows the source.
    await writeDbSlice('east', [
      { pod: 'db-0', address: '10.10.1.6', hostname: 'db-0', ready: false },
      { pod: 'db-1', address: '10.10.0.2', hostname: 'db-1' },
    ]);
    await waitForAnswer(`db.${APPS}.svc.cluster.local`, ['10.10.0.2', '10.20.0.1']);
    await writeDbSlice('east', dbPods.east());
    await waitForAnswer(`db.${APPS}.svc.cluster.local`, ['10.10.0.1', '10.20.0.1']);
  });

  it('an operator restart writes nothing', async () => {
    await waitForMirrored('db', 'InPlace');
    const versions = async () => [
      (await readService(CONSUMER, 'db'))?.metadata?.resourceVersion,
      ...(await slicesIn(CONSUMER, 'db')).map((s) => s.metadata?.resourceVersion),
    ];
    const before = await versions();
    await op?.stop();
    op = await startOperator(env.cluster('management').kubeconfig, operatorArgs);
    await eventually(async () => {
      if (!op!.logs.some((l) => l.includes('"cluster client built"') && l.includes(CONSUMER)))
        throw new Error('not yet');
    });
    await new Promise((r) => setTimeout(r, 3000));
    expect(await versions()).toEqual(before);
  });

  it('a source cluster stopped keeps its last known endpoints, marked in status; it is followed again once back', async () => {
    await stopCluster(env.info, 'east');
    try {
      const s = await waitForMirrored('db', 'ClusterUnreachable');
      expect(s.mirrored?.message).toMatch(/east \(source: last known endpoints kept\)/);
      // West still propagates while east is away.
      await writeDbSlice('west', [{ pod: 'db-2', address: '10.20.0.7', hostname: 'db-2' }]);
      await waitForSlices(CONSUMER, 'db', [
        'db.east: db-0=10.10.0.1 db-1=10.10.0.2(not ready)',
        'db.west: db-2=10.20.0.7',
      ]);
      // A restart while east is away: nothing is remembered, and east's slice stays as it is.
      await op?.stop();
      op = await startOperator(env.cluster('management').kubeconfig, operatorArgs);
      await waitForMirrored('db', 'ClusterUnreachable');
      await new Promise((r) => setTimeout(r, 2000));
      expect(await sliceSummary(CONSUMER, 'db')).toEqual([
        'db.east: db-0=10.10.0.1 db-1=10.10.0.2(not ready)',
        'db.west: db-2=10.20.0.7',
      ]);
      await waitForAnswer(`db.${APPS}.svc.cluster.local`, ['10.10.0.1', '10.20.0.7']);
    } finally {
      await startCluster(env.info, 'east');
    }
    await waitForMirrored('db', 'InPlace', 30_000);
    await eventually(() => writeDbSlice('east', dbPods.east('10.10.2.1')), 30_000, 200);
    await waitForSlices(CONSUMER, 'db', [
      'db.east: db-0=10.10.2.1 db-1=10.10.0.2(not ready)',
      'db.west: db-2=10.20.0.7',
    ]);
  });

  it('clusterIP: a mirror Service with a cluster IP of its own, whose slices hold the source cluster IPs; in the sources too when named apart', async () => {
    const sourceIPs: Record<string, string> = {};
    for (const cluster of SOURCES) {
      const created = await services(cluster).createNamespacedService({
        namespace: APPS,
        body: {
          metadata: { name: 'api' },
          spec: { selector: { app: 'api' }, ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] },
        },
      });
      sourceIPs[cluster] = created.spec!.clusterIP!;
      await writeEndpointSlice(kc(cluster), {
        namespace: APPS,
        service: 'api',
        name: 'api-abcde',
        addressType: 'IPv4',
        endpoints: [{ pod: 'api-1', address: cluster === 'east' ? '10.11.0.1' : '10.21.0.1' }],
        ports: [{ name: 'http', port: 8080 }],
      });
    }
    await apply(kc('management'), [
      gatewayDns('api', {
        service: `${APPS}/api`,
        resolutionType: 'clusterIP',
        mirror: { name: 'api-global' },
      }),
    ]);
    for (const cluster of [CONSUMER, ...SOURCES])
      await waitForSlices(cluster, 'api-global', [
        `api-global.east: ${sourceIPs.east}`,
        `api-global.west: ${sourceIPs.west}`,
      ]);
    const mirror = await readService(CONSUMER, 'api-global');
    expect(mirror?.spec?.clusterIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(mirror?.spec?.type).toBe('ClusterIP');
    await waitForAnswer(`api-global.${APPS}.svc.cluster.local`, [mirror!.spec!.clusterIP!]);
    const s = await waitForMirrored('api', 'InPlace');
    expect(s.mirrors.map((m) => `${m.cluster}:${m.state}`)).toEqual([
      'east:InPlace',
      'edge:InPlace',
      'west:InPlace',
    ]);
    // No pod ready behind east's cluster IP: its endpoint is not ready in the mirror either.
    await writeEndpointSlice(kc('east'), {
      namespace: APPS,
      service: 'api',
      name: 'api-abcde',
      addressType: 'IPv4',
      endpoints: [{ pod: 'api-1', address: '10.11.0.1', ready: false }],
      ports: [{ name: 'http', port: 8080 }],
    });
    await waitForSlices(CONSUMER, 'api-global', [
      `api-global.east: ${sourceIPs.east}(not ready)`,
      `api-global.west: ${sourceIPs.west}`,
    ]);

    // Removing spec.mirror withdraws it everywhere; the source Services stay.
    await kc('management')
      .makeApiClient(CustomObjectsApi)
      .patchNamespacedCustomObject(
        {
          group: 'connectivity.tanzu.vmware.com',
          version: 'v1alpha1',
          namespace: NS,
          plural: 'gatewaydns',
          name: 'api',
          body: { spec: { mirror: null } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    for (const cluster of [CONSUMER, ...SOURCES]) {
      await eventually(async () => {
        if (await readService(cluster, 'api-global')) throw new Error(`${cluster}: api-global still there`);
      });
      expect(await slicesIn(cluster, 'api-global')).toEqual([]);
    }
    for (const cluster of SOURCES) expect(await readService(cluster, 'api')).toBeDefined();
    await eventually(async () => {
      const st = await mirrorStatus('api');
      if (st.mirrored || st.mirrors.length)
        throw new Error(`status still has the mirror: ${JSON.stringify(st)}`);
    });
    await deleteGatewayDns(kc('management'), NS, 'api');
  });

  it('loadBalancer with only host names: an ExternalName Service, answered as a CNAME', async () => {
    await setLoadBalancer(kc('east'), APPS, 'lb', [{ hostname: 'lb-east.example.com' }]);
    await apply(kc('management'), [
      gatewayDns('lb', { service: `${APPS}/lb`, mirror: { name: 'lb-global' } }),
    ]);
    await eventually(async () => {
      const s = await readService(CONSUMER, 'lb-global');
      if (s?.spec?.externalName !== 'lb-east.example.com') throw new Error(`got ${JSON.stringify(s?.spec)}`);
    });
    expect((await readService(CONSUMER, 'lb-global'))?.spec?.type).toBe('ExternalName');
    await waitForAnswer(`lb-global.${APPS}.svc.cluster.local`, ['lb-east.example.com.'], 'CNAME');
    // An IP appears: the mirror becomes a ClusterIP Service with a slice (created again: the type changes).
    await setLoadBalancer(kc('west'), APPS, 'lb', [{ ip: '192.0.2.10' }]);
    await waitForSlices(CONSUMER, 'lb-global', ['lb-global.west: 192.0.2.10']);
    expect((await readService(CONSUMER, 'lb-global'))?.spec?.type).toBe('ClusterIP');
    const s = await waitForMirrored('lb', 'InPlace');
    expect(s.mirrored?.message).toMatch(/host names left out .*lb-east\.example\.com/);
    await deleteGatewayDns(kc('management'), NS, 'lb');
    await eventually(async () => {
      if (await readService(CONSUMER, 'lb-global')) throw new Error('lb-global still there');
    });
  });

  it('a name already taken is a per-cluster Conflict, and the object is left alone; freed, the mirror takes it', async () => {
    const taken = await services(CONSUMER).createNamespacedService({
      namespace: APPS,
      body: {
        metadata: { name: 'taken' },
        spec: { selector: { app: 'mine' }, ports: [{ port: 80, protocol: 'TCP' }] },
      },
    });
    await apply(kc('management'), [
      gatewayDns('taken', { service: `${APPS}/db`, resolutionType: 'headless', mirror: { name: 'taken' } }),
    ]);
    const s = await waitForMirrored('taken', 'Conflict');
    expect(s.mirrors.find((m) => m.cluster === CONSUMER)).toMatchObject({
      state: 'Conflict',
      message: expect.stringMatching(/Service apps\/taken exists and was not created by capi-dns/),
    });
    // The sources, where the name is free, have the mirror (a different name than the source Service).
    expect(s.mirrors.filter((m) => m.state === 'InPlace').map((m) => m.cluster)).toEqual(['east', 'west']);
    const after = await readService(CONSUMER, 'taken');
    expect(after?.metadata?.resourceVersion).toBe(taken.metadata?.resourceVersion);
    expect(await slicesIn(CONSUMER, 'taken')).toEqual([]);
    // Freed: the mirror takes the name, event-driven (the Service's deletion is what enqueues).
    await services(CONSUMER).deleteNamespacedService({ name: 'taken', namespace: APPS });
    await waitForSlices(CONSUMER, 'taken', [
      'taken.east: db-0=10.10.2.1 db-1=10.10.0.2(not ready)',
      'taken.west: db-2=10.20.0.7',
    ]);
    await waitForMirrored('taken', 'InPlace');
  });

  it('deleting the GatewayDNS removes its mirrors, and only them', async () => {
    await deleteGatewayDns(kc('management'), NS, 'taken');
    for (const cluster of [CONSUMER, ...SOURCES])
      await eventually(async () => {
        if (await readService(cluster, 'taken')) throw new Error(`${cluster}: taken still there`);
        if ((await slicesIn(cluster, 'taken')).length) throw new Error(`${cluster}: slices still there`);
      });
    expect(await readService(CONSUMER, 'db')).toBeDefined();
    expect(await sliceSummary(CONSUMER, 'db')).toHaveLength(2);
  });

  it('--cleanup-mirrors removes every mirror and nothing else, then exits', async () => {
    await services(CONSUMER).createNamespacedService({
      namespace: APPS,
      body: {
        metadata: { name: 'bystander' },
        spec: { selector: { app: 'b' }, ports: [{ port: 80, protocol: 'TCP' }] },
      },
    });
    await op?.stop();
    op = undefined;
    const { code, logs } = await runOperatorToExit(env.cluster('management').kubeconfig, [
      '--cleanup-mirrors',
    ]);
    expect({ code, logs: code === 0 ? '' : logs }).toEqual({ code: 0, logs: '' });
    expect(logs).toMatch(/mirror clean-up done/);
    expect(await readService(CONSUMER, 'db')).toBeUndefined();
    expect(await slicesIn(CONSUMER, 'db')).toEqual([]);
    expect(await readService(CONSUMER, 'bystander')).toBeDefined();
    for (const cluster of SOURCES) expect(await readService(cluster, 'db')).toBeDefined();
  });
});
