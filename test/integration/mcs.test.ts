// Multi-Cluster Services (KEP-1645) from the management cluster, on real API
// servers: what the upstream conformance suite does not cover, and the
// object-level part of what it does (its DNS and connectivity specs need real
// nodes: npm run conformance:mcs). The test API servers run no controllers:
// a Service gets its cluster IP from the API server's allocator, and the
// source EndpointSlices are written as the EndpointSlice controller would.
//
// Clusters: east and west are members of ClusterSet "shop" (their management
// namespace carries the label); other belongs to a management namespace that
// has not opted in and must see nothing.
import path from 'node:path';
import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
  type V1Service,
} from '@kubernetes/client-node';
import { CLUSTER_API, ensureNamespace, registerWorkloadCluster } from '../support/capi.js';
import { writeEndpointSlice } from '../support/endpointslices.js';
import { eventually, installCrds, readManifests, statusCode } from '../support/kube.js';
import { metricsOf, startOperator, type OperatorProcess } from '../support/operator.js';
import { repoRoot } from '../support/paths.js';
import { startCluster, stopCluster, TestEnv } from '../support/testenv.js';
import { dig, startDnsServer, type DnsProcess } from '../support/dns.js';
import type { ServiceImportStatus } from '../../api/index.js';

const NS = 'shop';
const OTHER_NS = 'other-team';
const APPS = 'apps';
/** Three members of ClusterSet shop-set; "other" is in another team's namespace (a second ClusterSet later). */
const MEMBERS = ['east', 'west', 'north'] as const;
const OTHER = 'other';
const ALL = [...MEMBERS, OTHER];
const MCS = { group: 'multicluster.x-k8s.io', version: 'v1beta1' };

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}
type ServiceImport = KubernetesObject & {
  spec: {
    type: string;
    ips?: string[];
    ipFamilies?: string[];
    ports: { name?: string; port: number; protocol?: string }[];
  };
  status?: ServiceImportStatus;
};

/** The ServiceExport CRD with status.clusters (KEP PR kubernetes/enhancements#6329: ClusterStatus entries). */
function withExportClusters(crd: KubernetesObject): KubernetesObject {
  if (crd.metadata?.name !== 'serviceexports.multicluster.x-k8s.io') return crd;
  const copy = structuredClone(crd) as KubernetesObject & {
    spec: {
      versions: {
        schema: { openAPIV3Schema: { properties: { status: { properties: Record<string, unknown> } } } };
      }[];
    };
  };
  for (const v of copy.spec.versions)
    v.schema.openAPIV3Schema.properties.status.properties.clusters = {
      type: 'array',
      items: { type: 'object', required: ['cluster'], properties: { cluster: { type: 'string' } } },
    };
  return copy;
}

describe('Multi-Cluster Services: ServiceExport → ServiceImport in every member cluster', () => {
  let env: TestEnv;
  let op: OperatorProcess | undefined;
  /** A dns-server per member cluster, reading that cluster's ServiceImports and MCS EndpointSlices. */
  const dns = new Map<string, DnsProcess>();
  const kc = (cluster: string): KubeConfig => env.kubeConfig(cluster);
  const custom = (cluster: string) => kc(cluster).makeApiClient(CustomObjectsApi);

  /** Until every member's import of `name` lists exactly `clusters` in status.clusters. */
  const waitForImportClusters = (name: string, clusters: string[]) =>
    Promise.all(
      MEMBERS.map((member) =>
        eventually(
          async () =>
            expect((await readImport(member, name))?.status?.clusters).toEqual(
              clusters.map((cluster) => ({ cluster })),
            ),
          10_000,
          50,
        ),
      ),
    );
  const sourcesReachable = async (cluster: string, name: string) =>
    (await readImport(cluster, name))?.status?.conditions?.find((c) => c.type === 'SourcesReachable');

  const readImport = async (cluster: string, name: string): Promise<ServiceImport | undefined> => {
    try {
      return (await custom(cluster).getNamespacedCustomObject({
        ...MCS,
        namespace: APPS,
        plural: 'serviceimports',
        name,
      })) as ServiceImport;
    } catch (err) {
      if (statusCode(err) === 404) return undefined;
      throw err;
    }
  };
  /** The members a ServiceExport says it reaches (status.clusters), undefined where the field is absent. */
  const exportReaches = async (cluster: string, name: string): Promise<string[] | undefined> => {
    const se = (await custom(cluster).getNamespacedCustomObject({
      ...MCS,
      namespace: APPS,
      plural: 'serviceexports',
      name,
    })) as { status?: { clusters?: { cluster: string }[] } };
    return se.status?.clusters?.map((c) => c.cluster);
  };
  const exportConditions = async (cluster: string, name: string): Promise<Condition[]> => {
    const se = (await custom(cluster).getNamespacedCustomObject({
      ...MCS,
      namespace: APPS,
      plural: 'serviceexports',
      name,
    })) as { status?: { conditions?: Condition[] } };
    return se.status?.conditions ?? [];
  };
  const waitForCondition = (cluster: string, name: string, type: string, status: string, reason?: string) =>
    eventually(
      async () => {
        const c = (await exportConditions(cluster, name)).find((x) => x.type === type);
        if (c?.status !== status || (reason && c.reason !== reason))
          throw new Error(
            `${cluster} ServiceExport ${name}: ${type}=${c?.status}/${c?.reason}, want ${status}/${reason}`,
          );
        return c;
      },
      15_000,
      50,
    );
  const createExport = (cluster: string, name: string, spec: Record<string, unknown> = {}) =>
    custom(cluster).createNamespacedCustomObject({
      ...MCS,
      namespace: APPS,
      plural: 'serviceexports',
      body: { apiVersion: `${MCS.group}/${MCS.version}`, kind: 'ServiceExport', metadata: { name }, spec },
    });
  const deleteExport = (cluster: string, name: string) =>
    custom(cluster).deleteNamespacedCustomObject({ ...MCS, namespace: APPS, plural: 'serviceexports', name });
  const createService = (cluster: string, name: string, spec: V1Service['spec']) =>
    kc(cluster)
      .makeApiClient(CoreV1Api)
      .createNamespacedService({ namespace: APPS, body: { metadata: { name }, spec } });
  const mcsSlices = async (cluster: string, name: string) =>
    (
      await kc(cluster)
        .makeApiClient(DiscoveryV1Api)
        .listNamespacedEndpointSlice({
          namespace: APPS,
          labelSelector: `multicluster.kubernetes.io/service-name=${name}`,
        })
    ).items;
  const property = async (cluster: string, name: string): Promise<string | undefined> => {
    try {
      const p = (await custom(cluster).getClusterCustomObject({
        group: 'about.k8s.io',
        version: 'v1alpha1',
        plural: 'clusterproperties',
        name,
      })) as { spec?: { value?: string } };
      return p.spec?.value;
    } catch (err) {
      if (statusCode(err) === 404) return undefined;
      throw err;
    }
  };

  beforeAll(async () => {
    env = await TestEnv.start({ workloadClusters: ALL });
    const root = repoRoot();
    await installCrds(kc('management'), [
      ...readManifests(path.join(root, 'crds')),
      ...readManifests(path.join(root, 'test', 'fixtures')),
    ]);
    for (const cluster of ALL) {
      // The MCS CRDs as config/workload installs them; the ClusterProperty CRD is left to the operator.
      // East's ServiceExport CRD has status.clusters as KEP PR #6329 proposes (mcs-api v0.5.2's has not).
      const mcsCrds = readManifests(path.join(root, 'crds', 'mcs'));
      await installCrds(kc(cluster), [
        ...readManifests(path.join(root, 'crds')),
        ...(cluster === 'east' ? mcsCrds.map(withExportClusters) : mcsCrds),
      ]);
      await registerWorkloadCluster(kc('management'), {
        namespace: cluster === OTHER ? OTHER_NS : NS,
        cluster,
        kubeconfigPath: env.cluster(cluster).kubeconfig,
      });
      await ensureNamespace(kc(cluster), APPS);
    }
    await kc('management')
      .makeApiClient(CoreV1Api)
      .patchNamespace(
        { name: NS, body: { metadata: { labels: { 'multicluster.x-k8s.io/clusterset': 'shop-set' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    op = await startOperator(env.cluster('management').kubeconfig, [
      '--no-leader-elect',
      '--no-manage-corefiles',
    ]);
    for (const cluster of MEMBERS)
      dns.set(
        cluster,
        await startDnsServer(['--zone', 'xcc.test', '--kubeconfig', env.cluster(cluster).kubeconfig]),
      );
  }, 120_000);

  const answer = async (cluster: string, name: string, type: string) =>
    (await dig(dns.get(cluster)!.port, ['+short', name, type])).stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .sort();
  const waitForAnswer = (cluster: string, name: string, type: string, want: string[]) =>
    eventually(
      async () => {
        const got = await answer(cluster, name, type);
        if (JSON.stringify(got) !== JSON.stringify([...want].sort()))
          throw new Error(`${cluster}: ${name} ${type}: got ${got.join(' ')}, want ${want.join(' ')}`);
      },
      10_000,
      50,
    );

  afterAll(async () => {
    await Promise.all([...dns.values()].map((d) => d.stop()));
    await op?.stop();
    await env?.stop();
  });

  it('publishes each member cluster id and ClusterSet as ClusterProperty objects (creating the CRD), and nothing in other namespaces', async () => {
    for (const cluster of MEMBERS)
      await eventually(async () => {
        expect(await property(cluster, 'cluster.clusterset.k8s.io')).toBe(cluster);
        expect(await property(cluster, 'clusterset.k8s.io')).toBe('shop-set');
      }, 15_000);
    expect(await property(OTHER, 'cluster.clusterset.k8s.io')).toBeUndefined();
  });

  it('an export in one cluster is imported into every member: ClusterSetIP with its own IP, ports, affinity, labels; MCS slices', async () => {
    await createService('east', 'web', {
      ports: [
        { name: 'http', port: 80, protocol: 'TCP' },
        { name: 'dns', port: 53, protocol: 'UDP' },
      ],
      sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 10 } },
      selector: { app: 'web' },
    });
    await writeEndpointSlice(kc('east'), {
      namespace: APPS,
      service: 'web',
      name: 'web-abcde',
      addressType: 'IPv4',
      endpoints: [
        { pod: 'web-0', address: '10.10.0.1' },
        { pod: 'web-1', address: '10.10.0.2', ready: false },
      ],
      ports: [{ name: 'http', port: 8080 }],
    });
    await createExport('east', 'web', {
      exportedLabels: { tier: 'front' },
      exportedAnnotations: { team: 'shop' },
    });
    for (const cluster of MEMBERS) {
      const si = await eventually(async () => {
        const got = await readImport(cluster, 'web');
        if (!got?.spec.ips?.length) throw new Error(`${cluster}: no ServiceImport with an IP yet`);
        return got;
      }, 15_000);
      expect(si.spec.type).toBe('ClusterSetIP');
      expect(si.spec.ipFamilies).toEqual(['IPv4']);
      expect(si.spec.ports.map((p) => `${p.name}/${p.port}/${p.protocol}`).sort()).toEqual([
        'dns/53/UDP',
        'http/80/TCP',
      ]);
      expect(si.metadata?.labels?.tier).toBe('front');
      expect(si.metadata?.annotations?.team).toBe('shop');
      // The IP is the derived Service's, which is not the local Service's name.
      const derived = (
        await kc(cluster).makeApiClient(CoreV1Api).listNamespacedService({
          namespace: APPS,
          labelSelector: 'multicluster.kubernetes.io/service-name=web',
        })
      ).items;
      expect(derived).toHaveLength(1);
      expect(derived[0]?.metadata?.name).not.toBe('web');
      expect(derived[0]?.spec?.clusterIP).toBe(si.spec.ips?.[0]);
      const slices = await eventually(async () => {
        const s = await mcsSlices(cluster, 'web');
        if (s.length !== 1) throw new Error(`${cluster}: ${s.length} MCS slices`);
        return s;
      }, 10_000);
      expect(slices[0]?.metadata?.labels).toMatchObject({
        'multicluster.kubernetes.io/source-cluster': 'east',
        'kubernetes.io/service-name': derived[0]?.metadata?.name,
      });
      expect(slices[0]?.endpoints?.map((e) => e.addresses[0])).toEqual(['10.10.0.1']);
    }
    expect(await readImport(OTHER, 'web')).toBeUndefined();
    // Each member's own dns-server answers with its own ClusterSet IP, and SRV per port.
    for (const cluster of MEMBERS) {
      const si = await readImport(cluster, 'web');
      await waitForAnswer(cluster, 'web.apps.svc.clusterset.local', 'A', si?.spec.ips ?? []);
      await waitForAnswer(cluster, 'web.apps.svc.clusterset.local', 'SRV', [
        '0 100 53 web.apps.svc.clusterset.local.',
        '0 100 80 web.apps.svc.clusterset.local.',
      ]);
      await waitForAnswer(cluster, '_http._tcp.web.apps.svc.clusterset.local', 'SRV', [
        '0 100 80 web.apps.svc.clusterset.local.',
      ]);
    }
    await waitForCondition('east', 'web', 'Valid', 'True', 'Valid');
    await waitForCondition('east', 'web', 'Ready', 'True', 'Exported');
    // Where the import's endpoints come from, as the MCS API says it (the status subresource).
    await waitForImportClusters('web', ['east']);
    for (const cluster of MEMBERS)
      expect(await sourcesReachable(cluster, 'web')).toMatchObject({
        status: 'True',
        reason: 'AllReachable',
      });
    await waitForCondition('east', 'web', 'Conflict', 'False', 'NoConflicts');
    // No export-to annotation: every member is reached (status.clusters, where the CRD has it).
    await eventually(
      async () => expect(await exportReaches('east', 'web')).toEqual(['east', 'north', 'west']),
      10_000,
      50,
    );
  });

  it('a second exporting cluster: union of ports by name, the older export wins, Conflict on both; endpoints behind a conflicting port left out', async () => {
    await createService('west', 'web', {
      ports: [
        { name: 'http', port: 81, protocol: 'TCP' },
        { name: 'admin', port: 9000, protocol: 'TCP' },
      ],
      selector: { app: 'web' },
    });
    await writeEndpointSlice(kc('west'), {
      namespace: APPS,
      service: 'web',
      name: 'web-fghij',
      addressType: 'IPv4',
      endpoints: [{ pod: 'web-9', address: '10.20.0.9' }],
      ports: [{ name: 'http', port: 8080 }],
    });
    await createExport('west', 'web');
    for (const cluster of ['east', 'west'])
      await waitForCondition(cluster, 'web', 'Conflict', 'True', 'PortConflict');
    // Both exports are merged into the import (the union of ports), whichever endpoints each gives.
    await waitForImportClusters('web', ['east', 'west']);
    const si = await readImport('west', 'web');
    expect(si?.spec.ports.map((p) => `${p.name}/${p.port}`).sort()).toEqual([
      'admin/9000',
      'dns/53',
      'http/80',
    ]);
    // West's pods serve its port http=81, which the import (east's, older) defines as 80: they get
    // none of the import's http traffic, so west contributes no slice (its admin port has no pods' port).
    await new Promise((r) => setTimeout(r, 1000));
    const sources = (await mcsSlices('west', 'web')).map(
      (s) => s.metadata?.labels?.['multicluster.kubernetes.io/source-cluster'],
    );
    expect(sources).toEqual(['east']);
    // West's ServiceExport CRD (mcs-api v0.5.2's) has no status.clusters: none is written there.
    expect(await exportReaches('west', 'web')).toBeUndefined();
  });

  it('the import stays while one cluster exports, and goes (with its slices and derived Service) when the last export goes', async () => {
    await deleteExport('east', 'web');
    await eventually(async () => {
      const sources = (await mcsSlices('east', 'web')).map(
        (s) => s.metadata?.labels?.['multicluster.kubernetes.io/source-cluster'],
      );
      expect(sources).toEqual(['west']);
    }, 10_000);
    expect(await readImport('east', 'web')).toBeDefined();
    await waitForImportClusters('web', ['west']);
    await deleteExport('west', 'web');
    for (const cluster of MEMBERS)
      await eventually(async () => {
        expect(await readImport(cluster, 'web')).toBeUndefined();
        expect(await mcsSlices(cluster, 'web')).toHaveLength(0);
        const derived = await kc(cluster).makeApiClient(CoreV1Api).listNamespacedService({
          namespace: APPS,
          labelSelector: 'multicluster.kubernetes.io/service-name=web',
        });
        expect(derived.items).toHaveLength(0);
      }, 10_000);
  });

  it('bad input: an export of a missing Service is Valid=False NoService, of an ExternalName Service InvalidServiceType; no import', async () => {
    await createExport('east', 'ghost');
    await waitForCondition('east', 'ghost', 'Valid', 'False', 'NoService');
    await createService('east', 'outside', { type: 'ExternalName', externalName: 'example.com' });
    await createExport('east', 'outside');
    await waitForCondition('east', 'outside', 'Valid', 'False', 'InvalidServiceType');
    expect(await readImport('east', 'ghost')).toBeUndefined();
    expect(await readImport('west', 'outside')).toBeUndefined();
    // The Service appears: the export becomes valid and is imported.
    await createService('east', 'ghost', {
      clusterIP: 'None',
      ports: [{ name: 'p', port: 5432 }],
      selector: { a: 'b' },
    });
    await waitForCondition('east', 'ghost', 'Valid', 'True', 'Valid');
    await eventually(
      async () => expect((await readImport('west', 'ghost'))?.spec.type).toBe('Headless'),
      10_000,
    );
    expect((await readImport('west', 'ghost'))?.spec.ips ?? []).toEqual([]);
  });

  it('an exporting cluster that stops answering: its endpoints are kept everywhere until it answers again', async () => {
    await createService('west', 'kept', { ports: [{ name: 'p', port: 7000 }], selector: { a: 'b' } });
    await writeEndpointSlice(kc('west'), {
      namespace: APPS,
      service: 'kept',
      name: 'kept-abcde',
      addressType: 'IPv4',
      endpoints: [{ pod: 'kept-0', address: '10.20.7.1' }],
      ports: [{ name: 'p', port: 7000 }],
    });
    await createExport('west', 'kept');
    const westSlices = async () =>
      (await mcsSlices('east', 'kept')).flatMap((s) => (s.endpoints ?? []).map((e) => e.addresses[0]));
    await eventually(async () => expect(await westSlices()).toEqual(['10.20.7.1']), 10_000);
    await stopCluster(env.info, 'west');
    try {
      // A change elsewhere reconciles the Service while west is away: west's export counts as last seen.
      await createService('east', 'kept', { ports: [{ name: 'p', port: 7000 }], selector: { a: 'b' } });
      await createExport('east', 'kept');
      await waitForCondition('east', 'kept', 'Valid', 'True', 'Valid');
      await new Promise((r) => setTimeout(r, 1500));
      expect(await westSlices()).toEqual(['10.20.7.1']);
      expect(await readImport('east', 'kept')).toBeDefined();
      // Marked: since when west has not answered.
      const marked = (await mcsSlices('east', 'kept')).find(
        (x) => x.metadata?.labels?.['multicluster.kubernetes.io/source-cluster'] === 'west',
      );
      const since = marked?.metadata?.annotations?.['connectivity.tanzu.vmware.com/source-unreachable-since'];
      expect(since).toMatch(/^\d{4}-\d\d-\d\dT/);
      // The import says so too: which exporter, since when.
      await eventually(
        async () =>
          expect(await sourcesReachable('east', 'kept')).toMatchObject({
            status: 'False',
            reason: 'SourceUnreachable',
            message: `west unreachable since ${since}: its last known endpoints are kept`,
          }),
        10_000,
        100,
      );
    } finally {
      await startCluster(env.info, 'west');
    }
    await eventually(async () => expect(await readImport('west', 'kept')).toBeDefined(), 15_000);
    // Back: the mark goes.
    await eventually(async () => {
      const back = (await mcsSlices('east', 'kept')).find(
        (x) => x.metadata?.labels?.['multicluster.kubernetes.io/source-cluster'] === 'west',
      );
      expect(
        back?.metadata?.annotations?.['connectivity.tanzu.vmware.com/source-unreachable-since'],
      ).toBeUndefined();
      expect(await sourcesReachable('east', 'kept')).toMatchObject({
        status: 'True',
        reason: 'AllReachable',
      });
    }, 15_000);
  });

  it('an operator restart rewrites nothing', async () => {
    // Settled first: every export Ready (the previous test's cluster came back and was written).
    for (const [cluster, name] of [
      ['east', 'kept'],
      ['west', 'kept'],
      ['east', 'ghost'],
    ] as const)
      await waitForCondition(cluster, name, 'Ready', 'True', 'Exported');
    await op?.stop();
    op = await startOperator(env.cluster('management').kubeconfig, [
      '--no-leader-elect',
      '--no-manage-corefiles',
    ]);
    const before = await readImport('west', 'ghost');
    await new Promise((r) => setTimeout(r, 3000));
    const after = await readImport('west', 'ghost');
    expect(after?.metadata?.resourceVersion).toBe(before?.metadata?.resourceVersion);
    expect((await metricsOf(op)).capi_dns_workload_writes_total ?? 0).toBe(0);
  });

  it("someone else's ClusterProperty id in a member: never overwritten, the cluster left out with an Event, the others unaffected; deleted, it joins again", async () => {
    const idProperty = { group: 'about.k8s.io', version: 'v1alpha1', plural: 'clusterproperties' };
    // Settled first: east's import of "kept" merges both exports.
    await waitForImportClusters('kept', ['east', 'west']);
    // Another implementation (or a person) takes west's id over: our label gone, another value.
    await custom('west').patchClusterCustomObject(
      {
        ...idProperty,
        name: 'cluster.clusterset.k8s.io',
        body: {
          metadata: { labels: { 'app.kubernetes.io/managed-by': null } },
          spec: { value: 'west-prod' },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    // Left out: nothing imported into west, its export merged nowhere; east keeps its own.
    await eventually(async () => expect(await readImport('west', 'ghost')).toBeUndefined(), 15_000);
    await eventually(
      async () => expect((await readImport('east', 'kept'))?.status?.clusters).toEqual([{ cluster: 'east' }]),
      15_000,
    );
    expect(await readImport('east', 'ghost')).toBeDefined();
    const events = await eventually(async () => {
      const list = await kc('management').makeApiClient(CoreV1Api).listNamespacedEvent({
        namespace: NS,
        fieldSelector: 'involvedObject.name=west,reason=ClusterPropertyConflict',
      });
      if (!list.items.length) throw new Error('no ClusterPropertyConflict Event on Cluster west yet');
      return list.items;
    }, 10_000);
    expect(events[0]?.message).toContain(
      'ClusterProperty cluster.clusterset.k8s.io is "west-prod", set by someone else, not "west": left out of ClusterSet shop-set',
    );
    await new Promise((r) => setTimeout(r, 1000));
    expect(await property('west', 'cluster.clusterset.k8s.io')).toBe('west-prod');
    // Theirs deleted: ours written, west a member again.
    await custom('west').deleteClusterCustomObject({ ...idProperty, name: 'cluster.clusterset.k8s.io' });
    await eventually(
      async () => expect(await property('west', 'cluster.clusterset.k8s.io')).toBe('west'),
      15_000,
    );
    await eventually(async () => expect(await readImport('west', 'ghost')).toBeDefined(), 15_000);
    await waitForImportClusters('kept', ['east', 'west']);
  });

  it('an export to part of the ClusterSet (the export-to annotation over Cluster labels): imported only where it matches, moved when it changes, refused when malformed', async () => {
    const annotate = (value: string) =>
      custom('east').patchNamespacedCustomObject(
        {
          ...MCS,
          namespace: APPS,
          plural: 'serviceexports',
          name: 'db',
          body: { metadata: { annotations: { 'connectivity.tanzu.vmware.com/export-to': value } } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    for (const [cluster, region] of [
      ['east', 'us'],
      ['west', 'eu'],
      ['north', 'eu'],
    ] as const)
      await custom('management').patchNamespacedCustomObject(
        { ...CLUSTER_API, namespace: NS, name: cluster, body: { metadata: { labels: { region } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    await createService('east', 'db', { ports: [{ name: 'pg', port: 5432 }], selector: { app: 'db' } });
    await custom('east').createNamespacedCustomObject({
      ...MCS,
      namespace: APPS,
      plural: 'serviceexports',
      body: {
        apiVersion: `${MCS.group}/${MCS.version}`,
        kind: 'ServiceExport',
        metadata: { name: 'db', annotations: { 'connectivity.tanzu.vmware.com/export-to': 'region=eu' } },
      },
    });
    const imported = async () =>
      Object.fromEntries(
        await Promise.all(MEMBERS.map(async (c) => [c, (await readImport(c, 'db')) !== undefined] as const)),
      );
    // Only west and north (region=eu) consume it; east, the exporter, does not.
    await eventually(
      async () => expect(await imported()).toEqual({ east: false, west: true, north: true }),
      10_000,
      50,
    );
    const ip = (await readImport('west', 'db'))?.spec.ips ?? [];
    await waitForAnswer('west', 'db.apps.svc.clusterset.local', 'A', ip);
    await waitForAnswer('east', 'db.apps.svc.clusterset.local', 'A', []);
    await waitForCondition('east', 'db', 'Ready', 'True', 'Exported');
    // status.clusters (KEP PR #6329): the members the export reaches, in step with the annotation.
    await eventually(
      async () => expect(await exportReaches('east', 'db')).toEqual(['north', 'west']),
      10_000,
      50,
    );
    // Changed: the import moves.
    const began = Date.now();
    await annotate('region in (us)');
    await eventually(
      async () => expect(await imported()).toEqual({ east: true, west: false, north: false }),
      10_000,
      50,
    );
    process.stderr.write(
      `export-to changed → the import moved from west to east in ${Date.now() - began} ms\n`,
    );
    await eventually(async () => expect(await exportReaches('east', 'db')).toEqual(['east']), 10_000, 50);
    // Malformed: refused with a reason, withdrawn everywhere.
    await annotate('region in (us');
    await waitForCondition('east', 'db', 'Valid', 'False', 'InvalidExportTo');
    await eventually(
      async () => expect(await imported()).toEqual({ east: false, west: false, north: false }),
      10_000,
      50,
    );
    await eventually(async () => expect(await exportReaches('east', 'db')).toEqual([]), 10_000, 50);
    await deleteExport('east', 'db');
  });

  it('a cluster that leaves the ClusterSet (its Cluster deleted): its exports are withdrawn from the others', async () => {
    await createService('west', 'solo', { ports: [{ name: 'p', port: 7100 }], selector: { a: 'b' } });
    await createExport('west', 'solo');
    await eventually(async () => expect(await readImport('east', 'solo')).toBeDefined(), 10_000);
    const clusters = { ...CLUSTER_API, namespace: NS };
    await custom('management').deleteNamespacedCustomObject({ ...clusters, name: 'west' });
    await eventually(async () => expect(await readImport('east', 'solo')).toBeUndefined(), 15_000);
    // Back in: registered again, it is a member again and its export is imported again.
    await registerWorkloadCluster(kc('management'), {
      namespace: NS,
      cluster: 'west',
      kubeconfigPath: env.cluster('west').kubeconfig,
    });
    await eventually(async () => expect(await readImport('east', 'solo')).toBeDefined(), 15_000);
  });

  it("a second ClusterSet (another team's namespace): its exports stay in it, and the first one's never reach it", async () => {
    const label = (value: string | null) =>
      kc('management')
        .makeApiClient(CoreV1Api)
        .patchNamespace(
          { name: OTHER_NS, body: { metadata: { labels: { 'multicluster.x-k8s.io/clusterset': value } } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
    await label('other-set');
    try {
      await eventually(async () => {
        expect(await property(OTHER, 'cluster.clusterset.k8s.io')).toBe(OTHER);
        expect(await property(OTHER, 'clusterset.k8s.io')).toBe('other-set');
      }, 15_000);
      await createService(OTHER, 'solo2', { ports: [{ name: 'p', port: 7200 }], selector: { a: 'b' } });
      await createExport(OTHER, 'solo2');
      await eventually(
        async () =>
          expect((await readImport(OTHER, 'solo2'))?.status?.clusters).toEqual([{ cluster: OTHER }]),
        15_000,
      );
      for (const member of MEMBERS) expect(await readImport(member, 'solo2')).toBeUndefined();
      // shop-set's imports (ghost, exported from east) are not the other team's.
      expect(await readImport('west', 'ghost')).toBeDefined();
      expect(await readImport(OTHER, 'ghost')).toBeUndefined();
    } finally {
      await label(null);
    }
    await eventually(async () => expect(await readImport(OTHER, 'solo2')).toBeUndefined(), 15_000);
  });

  it('a namespace that leaves the ClusterSet: its imports and cluster properties are withdrawn', async () => {
    await kc('management')
      .makeApiClient(CoreV1Api)
      .patchNamespace(
        { name: NS, body: { metadata: { labels: { 'multicluster.x-k8s.io/clusterset': null } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    for (const cluster of MEMBERS) {
      await eventually(async () => {
        expect(await readImport(cluster, 'ghost')).toBeUndefined();
        expect(await property(cluster, 'cluster.clusterset.k8s.io')).toBeUndefined();
      }, 15_000);
      await waitForAnswer(cluster, 'ghost.apps.svc.clusterset.local', 'A', []);
    }
  });
});
