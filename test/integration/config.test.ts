// The manifests of config/ and examples/ against the real API servers of the
// test environment: every kustomization is applied with
// `kubectl apply --dry-run=server -k`, so anything the API server would reject
// (schema, defaulting, admission, RBAC objects, CRD validation) fails here.
// The RBAC is then applied for real and checked with `kubectl auth can-i`
// impersonating the service accounts: least privilege, as the API server sees it.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { EXPOSED_DNS_SERVICE } from '../../api/index.js';
import { renderClusterResourceSet } from '../../scripts/clusterresourceset/render.js';
import { ensureNamespace } from '../support/capi.js';
import { testEnvInfo } from '../support/environment.js';
import { installCrds, readManifests } from '../support/kube.js';
import { binPath, gatewayApiCrds, repoRoot } from '../support/paths.js';
import { clusterOf, kubeConfigOf } from '../support/testenv.js';

const run = promisify(execFile);
const info = testEnvInfo();
const root = repoRoot();
// Management objects go to the management cluster; workload objects to one
// workload cluster (they are all alike), cluster-b, the walkthrough's client side.
const MANAGEMENT = 'management';
const WORKLOAD = 'cluster-b';
/** A ClusterSet member: the Multi-Cluster Services role is bound here, not in WORKLOAD. */
const MEMBER = 'cluster-a';

async function kubectl(cluster: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await run(
      binPath('kubectl'),
      ['--kubeconfig', clusterOf(info, cluster).kubeconfig, ...args],
      {
        cwd: root,
      },
    );
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`kubectl ${args.join(' ')} on ${cluster}: ${e.stderr?.trim() || e.message}`);
  }
}

const dryRun = (cluster: string, args: string[]): Promise<string> =>
  kubectl(cluster, ['apply', '--dry-run=server', ...args]);

/** "kind/name" of each line kubectl prints, e.g. "deployment.apps/capi-dns-controller". */
function appliedObjects(output: string): string[] {
  return output
    .trim()
    .split('\n')
    .map((line) => {
      expect(line).toMatch(/ \(server dry run\)$/);
      return line.split(' ')[0] as string;
    })
    .sort();
}

interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: Record<string, unknown>;
}

async function render(dir: string): Promise<Manifest[]> {
  const out = await run(binPath('kubectl'), ['kustomize', dir], { cwd: root });
  return parseAllDocuments(out.stdout).map((d) => d.toJS() as Manifest);
}

beforeAll(async () => {
  // A server dry run of a namespaced object fails while its namespace does
  // not exist (the Namespace in the same kustomization is only dry-run too),
  // so the namespaces are created for real, as the first apply would.
  await ensureNamespace(kubeConfigOf(info, MANAGEMENT), 'capi-dns-system');
  await ensureNamespace(kubeConfigOf(info, WORKLOAD), 'capi-dns');
  await ensureNamespace(kubeConfigOf(info, 'cluster-a'), 'projectcontour');
});

describe('config/ on the management cluster', () => {
  it('config/default: GatewayDNS, DNSZone and ClusterProfile CRDs, RBAC and the controller, accepted by the API server', async () => {
    expect(appliedObjects(await dryRun(MANAGEMENT, ['-k', 'config/default']))).toEqual([
      'clusterrole.rbac.authorization.k8s.io/capi-dns-admin',
      'clusterrole.rbac.authorization.k8s.io/capi-dns-controller',
      'clusterrole.rbac.authorization.k8s.io/capi-dns-controller-dnszones',
      'clusterrole.rbac.authorization.k8s.io/capi-dns-controller-kubeconfig-reader',
      'clusterrole.rbac.authorization.k8s.io/capi-dns-gatewaydns-editor',
      'clusterrole.rbac.authorization.k8s.io/capi-dns-gatewaydns-viewer',
      'clusterrolebinding.rbac.authorization.k8s.io/capi-dns-controller',
      'clusterrolebinding.rbac.authorization.k8s.io/capi-dns-controller-dnszones',
      'clusterrolebinding.rbac.authorization.k8s.io/capi-dns-controller-kubeconfig-reader',
      'customresourcedefinition.apiextensions.k8s.io/clusterprofiles.multicluster.x-k8s.io',
      'customresourcedefinition.apiextensions.k8s.io/dnszones.connectivity.tanzu.vmware.com',
      'customresourcedefinition.apiextensions.k8s.io/gatewaydns.connectivity.tanzu.vmware.com',
      'deployment.apps/capi-dns-controller',
      'namespace/capi-dns-system',
      'poddisruptionbudget.policy/capi-dns-controller',
      'role.rbac.authorization.k8s.io/capi-dns-controller-leader-election',
      'rolebinding.rbac.authorization.k8s.io/capi-dns-controller-leader-election',
      'serviceaccount/capi-dns-controller',
    ]);
  });

  it.each(['config/crd', 'config/rbac/operator', 'config/operator'])('%s on its own', async (dir) => {
    expect(appliedObjects(await dryRun(MANAGEMENT, ['-k', dir])).length).toBeGreaterThan(0);
  });

  it.each([
    ['examples/gateway-dns-node-port.yaml', 'ingress-node-ports'],
    ['examples/gateway-dns-cluster-ip.yaml', 'postgres-cluster-ip'],
    ['examples/gateway-dns-headless.yaml', 'kafka-pods'],
    ['examples/gateway-dns-mirror.yaml', 'pg-mirror'],
    ['examples/gateway-dns-gateway-api.yaml', 'shop-gateways'],
  ])('%s: a GatewayDNS per resolution type', async (file, name) => {
    expect(appliedObjects(await dryRun(MANAGEMENT, ['-f', file]))).toEqual([
      `gatewaydns.connectivity.tanzu.vmware.com/${name}`,
    ]);
  });

  it("examples/dev-team-gateway-dns.yaml: the walkthrough's GatewayDNS", async () => {
    expect(appliedObjects(await dryRun(MANAGEMENT, ['-f', 'examples/dev-team-gateway-dns.yaml']))).toEqual([
      'gatewaydns.connectivity.tanzu.vmware.com/dev-team-gateway-dns',
    ]);
  });
});

describe('config/clusterresourceset: the workload side as a Cluster API add-on', () => {
  it('is what config/workload renders to (generated: npm run generate:clusterresourceset)', () => {
    expect(
      readFileSync(path.join(root, 'config', 'clusterresourceset', 'clusterresourceset.yaml'), 'utf8'),
    ).toBe(renderClusterResourceSet(path.join(root, 'config', 'workload'), binPath('kubectl')));
  });

  it("is accepted by the management cluster's API server and Cluster API's webhooks", async () => {
    await ensureNamespace(kubeConfigOf(info, MANAGEMENT), 'crs-dry-run');
    expect(
      appliedObjects(await dryRun(MANAGEMENT, ['-n', 'crs-dry-run', '-k', 'config/clusterresourceset'])),
    ).toEqual([
      'clusterresourceset.addons.cluster.x-k8s.io/capi-dns-workload',
      'configmap/capi-dns-workload-cluster',
      'configmap/capi-dns-workload-namespaced',
    ]);
  });
});

describe('config/ on a workload cluster', () => {
  it('config/workload: DNSRecordSet and MCS CRDs, RBAC, the dns-server, its Service and PDB', async () => {
    expect(appliedObjects(await dryRun(WORKLOAD, ['-k', 'config/workload']))).toEqual([
      'clusterrole.rbac.authorization.k8s.io/capi-dns-server-clusterset',
      'clusterrolebinding.rbac.authorization.k8s.io/capi-dns-server-clusterset',
      'customresourcedefinition.apiextensions.k8s.io/clusterproperties.about.k8s.io',
      'customresourcedefinition.apiextensions.k8s.io/dnsrecordsets.connectivity.tanzu.vmware.com',
      'customresourcedefinition.apiextensions.k8s.io/serviceexports.multicluster.x-k8s.io',
      'customresourcedefinition.apiextensions.k8s.io/serviceimports.multicluster.x-k8s.io',
      'deployment.apps/capi-dns-server',
      'namespace/capi-dns',
      'networkpolicy.networking.k8s.io/capi-dns-server',
      'poddisruptionbudget.policy/capi-dns-server',
      'resourcequota/capi-dns-critical-pods',
      'role.rbac.authorization.k8s.io/capi-dns-server',
      'rolebinding.rbac.authorization.k8s.io/capi-dns-server',
      'service/capi-dns-server',
      'serviceaccount/capi-dns-server',
    ]);
  });

  it.each([
    'config/rbac/dns-server',
    'config/rbac/workload-access',
    'config/rbac/workload-access/clusterset',
    'config/dns-server',
  ])('%s on its own', async (dir) => {
    expect(appliedObjects(await dryRun(WORKLOAD, ['-k', dir])).length).toBeGreaterThan(0);
  });

  it('config/dns-server-exposed: the dns-server reachable from outside, off by default (not in config/workload)', async () => {
    expect(appliedObjects(await dryRun(WORKLOAD, ['-k', 'config/dns-server-exposed']))).toEqual([
      'networkpolicy.networking.k8s.io/capi-dns-server-external',
      'service/capi-dns-server-external',
    ]);
    expect((await render('config/workload')).map((m) => m.metadata.name)).not.toContain(
      'capi-dns-server-external',
    );
  });

  it('examples/kuard.yaml: kuard behind the LoadBalancer Service projectcontour/envoy', async () => {
    expect(appliedObjects(await dryRun('cluster-a', ['-f', 'examples/kuard.yaml']))).toEqual([
      'deployment.apps/kuard',
      'namespace/projectcontour',
      'service/envoy',
    ]);
  });
});

describe('the dry run catches what the API server rejects', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-config-test-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a kustomization with an invalid GatewayDNS', async () => {
    writeFileSync(path.join(dir, 'kustomization.yaml'), 'resources:\n  - bad.yaml\n');
    writeFileSync(
      path.join(dir, 'bad.yaml'),
      [
        'apiVersion: connectivity.tanzu.vmware.com/v1alpha1',
        'kind: GatewayDNS',
        'metadata: {name: bad, namespace: dev-team}',
        'spec: {clusterSelector: {}, service: projectcontour/envoy, resolutionType: teleport}',
      ].join('\n'),
    );
    await expect(dryRun(MANAGEMENT, ['-k', dir])).rejects.toThrow(/resolutionType/);
  });
});

describe('rendered manifests', () => {
  it.each(['config/default', 'config/workload'])(
    '%s: every container is locked down and probed',
    async (dir) => {
      const deployments = (await render(dir)).filter((m) => m.kind === 'Deployment');
      expect(deployments).toHaveLength(1);
      for (const d of deployments) {
        const pod = (d.spec?.template as { spec: PodSpec }).spec;
        expect(pod.securityContext).toMatchObject({
          runAsNonRoot: true,
          seccompProfile: { type: 'RuntimeDefault' },
        });
        for (const c of pod.containers) {
          expect(c.securityContext).toEqual({
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
          });
          expect(c.livenessProbe?.httpGet).toMatchObject({ path: '/healthz' });
          expect(c.readinessProbe?.httpGet).toMatchObject({ path: '/readyz' });
          expect(c.resources?.requests).toBeDefined();
          expect(c.resources?.limits?.memory).toBeDefined();
          expect(c.image).toMatch(/^ghcr\.io\/capi-dns\/[a-z-]+:0\.1\.0$/);
        }
      }
    },
  );

  it("the operator's Leases are where its Role lets it write; three replicas share the namespaces by shard", async () => {
    const manifests = await render('config/default');
    const deployment = manifests.find((m) => m.kind === 'Deployment');
    const role = manifests.find((m) => m.kind === 'Role');
    const container = (deployment?.spec?.template as { spec: { containers: { args: string[] }[] } }).spec
      .containers[0];
    expect(container?.args).toContain('--leader-election-namespace=$(POD_NAMESPACE)');
    expect(deployment?.metadata.namespace).toBe(role?.metadata.namespace);
    expect(deployment?.spec?.replicas).toBe(3);
    expect(container?.args).toContain('--shards=16');
  });

  it('the dns-server: CoreDNS (and helm test) alone on the DNS port, monitoring alone on metrics; critical; one replica per node; a lame duck within the grace period', async () => {
    const manifests = await render('config/workload');
    const policy = manifests.find((m) => m.kind === 'NetworkPolicy');
    expect(policy?.spec).toEqual({
      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'capi-dns-server' } },
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: [
            {
              namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
              podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
            },
          ],
          ports: [
            { port: 5353, protocol: 'UDP' },
            { port: 5353, protocol: 'TCP' },
          ],
        },
        {
          // The chart's helm test pod, in this namespace only.
          from: [{ podSelector: { matchLabels: { 'capi-dns.io/dns-test': 'true' } } }],
          ports: [
            { port: 5353, protocol: 'UDP' },
            { port: 5353, protocol: 'TCP' },
          ],
        },
        {
          from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
          ports: [{ port: 8080, protocol: 'TCP' }],
        },
      ],
    });
    const deployment = manifests.find((m) => m.kind === 'Deployment');
    const pod = (
      deployment?.spec?.template as {
        spec: PodSpec & {
          priorityClassName?: string;
          terminationGracePeriodSeconds?: number;
          topologySpreadConstraints?: { whenUnsatisfiable: string; topologyKey: string }[];
        };
      }
    ).spec;
    expect(pod.priorityClassName).toBe('system-cluster-critical');
    expect(pod.topologySpreadConstraints).toEqual([
      expect.objectContaining({ topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule' }),
    ]);
    const args = (pod.containers[0] as { args?: string[] }).args ?? [];
    const lameduck = Number(
      /^--lameduck=(\d+)s$/.exec(args.find((a) => a.startsWith('--lameduck=')) ?? '')?.[1],
    );
    // The lame duck, then up to 3 s of stopping, within the grace period.
    expect(lameduck + 3).toBeLessThan(pod.terminationGracePeriodSeconds ?? 30);
    // The build thread's cap leaves the pod's limit room for the main thread and an empty zone's
    // 156 MB (bench/README.md, "dns-server memory against zone size").
    const buildHeap = Number(
      /^--build-heap-limit=(\d+)Mi$/.exec(args.find((a) => a.startsWith('--build-heap-limit=')) ?? '')?.[1],
    );
    const limit = Number(/^(\d+)Mi$/.exec(String(pod.containers[0]!.resources?.limits?.memory))?.[1]);
    expect(buildHeap).toBeGreaterThanOrEqual(96);
    expect(limit - buildHeap).toBeGreaterThanOrEqual(256);
    const quota = manifests.find((m) => m.kind === 'ResourceQuota');
    expect(quota?.spec?.scopeSelector).toEqual({
      matchExpressions: [{ operator: 'In', scopeName: 'PriorityClass', values: ['system-cluster-critical'] }],
    });
  });

  it("the exposed Service: a LoadBalancer named as the operator reads it, keeping clients' addresses (rate limiting), to the dns-server's DNS port; DNS from anywhere", async () => {
    const objects = await render('config/dns-server-exposed');
    const service = objects.find((m) => m.kind === 'Service');
    expect(service?.metadata).toEqual(
      expect.objectContaining({ name: EXPOSED_DNS_SERVICE, namespace: 'capi-dns' }),
    );
    expect(service?.spec).toEqual(
      expect.objectContaining({
        type: 'LoadBalancer',
        externalTrafficPolicy: 'Local',
        selector: { 'app.kubernetes.io/name': 'capi-dns-server' },
        ports: [
          { name: 'dns-udp', port: 53, targetPort: 'dns-udp', protocol: 'UDP' },
          { name: 'dns-tcp', port: 53, targetPort: 'dns-tcp', protocol: 'TCP' },
        ],
      }),
    );
    const policy = objects.find((m) => m.kind === 'NetworkPolicy');
    expect(policy?.spec?.ingress).toEqual([
      {
        from: [{ ipBlock: { cidr: '0.0.0.0/0' } }, { ipBlock: { cidr: '::/0' } }],
        ports: [
          { port: 5353, protocol: 'UDP' },
          { port: 5353, protocol: 'TCP' },
        ],
      },
    ]);
  });

  it('the dns-server Service maps port 53 to the non-root port 5353, over UDP and TCP', async () => {
    const service = (await render('config/workload')).find((m) => m.kind === 'Service');
    expect(service?.metadata).toEqual(
      expect.objectContaining({ name: 'capi-dns-server', namespace: 'capi-dns' }),
    );
    expect(service?.spec?.ports).toEqual([
      { name: 'dns-udp', port: 53, targetPort: 'dns-udp', protocol: 'UDP' },
      { name: 'dns-tcp', port: 53, targetPort: 'dns-tcp', protocol: 'TCP' },
    ]);
  });
});

interface PodSpec {
  securityContext?: Record<string, unknown>;
  containers: {
    image: string;
    securityContext?: Record<string, unknown>;
    livenessProbe?: { httpGet?: Record<string, unknown> };
    readinessProbe?: { httpGet?: Record<string, unknown> };
    resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  }[];
}

describe('RBAC, as the API server authorizes it', () => {
  const OPERATOR = 'system:serviceaccount:capi-dns-system:capi-dns-controller';
  const DNS_SERVER = 'system:serviceaccount:capi-dns:capi-dns-server';

  beforeAll(async () => {
    // For real this time: `auth can-i` evaluates stored roles and bindings.
    await kubectl(MANAGEMENT, ['apply', '-k', 'config/rbac/operator']);
    await kubectl(WORKLOAD, ['apply', '-k', 'config/rbac/dns-server']);
    await kubectl(WORKLOAD, ['apply', '-k', 'config/rbac/workload-access']);
    // The mirror role, bound in one namespace (apps) as a platform admin would for each granted one.
    await kubectl(WORKLOAD, ['create', 'namespace', 'apps']).catch((err: unknown) => {
      if (!String(err).includes('AlreadyExists')) throw err;
    });
    await kubectl(WORKLOAD, ['apply', '-k', 'config/rbac/workload-access/mirror-namespace']);
    // can-i names resources through discovery: spec.gatewayRef's Gateway API kinds need their CRDs.
    await installCrds(kubeConfigOf(info, WORKLOAD), readManifests(gatewayApiCrds('standard')));
    // A ClusterSet member (cluster-a here, so that the checks above see the mirror role alone).
    // can-i names resources through discovery: the CRDs config/workload installs come first.
    await kubectl(MEMBER, ['apply', '-k', 'crds/mcs']);
    await kubectl(MEMBER, ['apply', '-k', 'crds/about']);
    await kubectl(MEMBER, [
      'wait',
      '--for=condition=Established',
      '--timeout=30s',
      'crd/serviceexports.multicluster.x-k8s.io',
      'crd/serviceimports.multicluster.x-k8s.io',
      'crd/clusterproperties.about.k8s.io',
    ]);
    await kubectl(MEMBER, ['apply', '-k', 'config/rbac/workload-access/clusterset']);
  });

  /** `kubectl auth can-i` answers "yes" (exit 0) or "no" (exit 1) on stdout. */
  async function canI(cluster: string, as: string, args: string[]): Promise<boolean> {
    const kubeconfig = clusterOf(info, cluster).kubeconfig;
    const argv = ['--kubeconfig', kubeconfig, 'auth', 'can-i', '--as', as, ...args];
    try {
      await run(binPath('kubectl'), argv);
      return true;
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      if (e.code === 1 && e.stdout?.trim() === 'no') return false;
      throw new Error(`kubectl ${argv.join(' ')}: ${e.stderr ?? String(err)}`);
    }
  }

  it.each([
    [true, 'watch gatewaydns.connectivity.tanzu.vmware.com -A'],
    [true, 'patch gatewaydns.connectivity.tanzu.vmware.com -n dev-team'],
    [false, 'update gatewaydns.connectivity.tanzu.vmware.com -n dev-team'],
    [true, 'patch gatewaydns.connectivity.tanzu.vmware.com --subresource=status -n dev-team'],
    [false, 'update gatewaydns.connectivity.tanzu.vmware.com --subresource=status -n dev-team'],
    [false, 'get gatewaydns.connectivity.tanzu.vmware.com --subresource=status -n dev-team'],
    [false, 'update gatewaydns.connectivity.tanzu.vmware.com --subresource=finalizers -n dev-team'],
    [false, 'create gatewaydns.connectivity.tanzu.vmware.com -n dev-team'],
    [false, 'delete gatewaydns.connectivity.tanzu.vmware.com -n dev-team'],
    [true, 'watch clusters.cluster.x-k8s.io -A'],
    [false, 'patch clusters.cluster.x-k8s.io -n dev-team'],
    [true, 'list secrets -n dev-team'],
    [false, 'create secrets -n dev-team'],
    [false, 'update secrets -n dev-team'],
    // DNSSEC keys generated for DNSZones (ADR 0106): created once in its own namespace, never changed.
    [true, 'create secrets -n capi-dns-system'],
    // and the key Secrets DNSZones name watched one by one (operator/zones/secret-watches.ts).
    [true, 'watch secrets -n capi-dns-system'],
    [false, 'update secrets/apps-dnssec -n capi-dns-system'],
    [false, 'delete secrets/apps-dnssec -n capi-dns-system'],
    [true, 'create events -n dev-team'],
    [false, 'patch events -n dev-team'],
    // Sharded replicas: a member Lease each (named after the pod) and a Lease per shard, found by label.
    [true, 'create leases.coordination.k8s.io -n capi-dns-system'],
    [true, 'watch leases.coordination.k8s.io -n capi-dns-system'],
    [true, 'update leases.coordination.k8s.io/capi-dns-controller-shard-7 -n capi-dns-system'],
    [true, 'delete leases.coordination.k8s.io/capi-dns-controller-member-x -n capi-dns-system'],
    [false, 'patch leases.coordination.k8s.io/capi-dns-controller -n capi-dns-system'],
    [false, 'create leases.coordination.k8s.io -n kube-system'],
    [false, 'watch leases.coordination.k8s.io -A'],
    [false, 'list configmaps -n kube-system'],
    [false, 'list dnsrecordsets.connectivity.tanzu.vmware.com -A'],
  ])('operator may (%s) %s', async (allowed, verbAndResource) => {
    expect(await canI(MANAGEMENT, OPERATOR, verbAndResource.split(' '))).toBe(allowed);
  });

  it.each([
    [true, 'list dnsrecordsets.connectivity.tanzu.vmware.com -n capi-dns'],
    [true, 'watch dnsrecordsets.connectivity.tanzu.vmware.com -n capi-dns'],
    [false, 'create dnsrecordsets.connectivity.tanzu.vmware.com -n capi-dns'],
    [false, 'list dnsrecordsets.connectivity.tanzu.vmware.com -n default'],
    [false, 'list dnsrecordsets.connectivity.tanzu.vmware.com -A'],
    [false, 'list secrets -n capi-dns'],
    [true, 'get secrets/capi-dns-dnssec-keys -n capi-dns'],
    [false, 'get secrets/other -n capi-dns'],
    [false, 'watch secrets/capi-dns-dnssec-keys -n capi-dns'],
    // The clusterset zone: MCS EndpointSlices (and ServiceImports) of every namespace, read only.
    [true, 'watch endpointslices.discovery.k8s.io -A'],
    [false, 'create endpointslices.discovery.k8s.io -n apps'],
    [false, 'list services -A'],
  ])('dns-server may (%s) %s', async (allowed, verbAndResource) => {
    expect(await canI(WORKLOAD, DNS_SERVER, verbAndResource.split(' '))).toBe(allowed);
  });

  // config/rbac/workload-access: the operator in a workload cluster, with a restricted identity.
  it.each([
    [true, 'list endpointslices.discovery.k8s.io -n apps'],
    [true, 'watch endpointslices.discovery.k8s.io -n apps'],
    [true, 'watch services -n apps'],
    // spec.mirror: server-side apply (patch; create when new) and delete; never get, update or deletecollection.
    [true, 'create services -n apps'],
    [true, 'patch services -n apps'],
    [true, 'delete services -n apps'],
    [false, 'get services -n apps'],
    [false, 'update services -n apps'],
    [false, 'deletecollection services -n apps'],
    [false, 'update services --subresource=status -n apps'],
    [true, 'create endpointslices.discovery.k8s.io -n apps'],
    [true, 'patch endpointslices.discovery.k8s.io -n apps'],
    [true, 'delete endpointslices.discovery.k8s.io -n apps'],
    [false, 'get endpointslices.discovery.k8s.io -n apps'],
    [false, 'update endpointslices.discovery.k8s.io -n apps'],
    [false, 'deletecollection endpointslices.discovery.k8s.io -n apps'],
    [false, 'create endpoints -n apps'],
    // Mirrors only where a RoleBinding grants them (config/rbac/workload-access/mirror-namespace).
    [false, 'create services -n kube-system'],
    [false, 'patch endpointslices.discovery.k8s.io -n kube-system'],
    [false, 'create services -n other'],
    [false, 'create pods -n apps'],
    [true, 'watch nodes'],
    [true, 'watch namespaces'],
    [true, 'patch dnsrecordsets.connectivity.tanzu.vmware.com -n capi-dns'],
    [true, 'create dnsrecordsets.connectivity.tanzu.vmware.com -n capi-dns'],
    [true, 'delete dnsrecordsets.connectivity.tanzu.vmware.com -n capi-dns'],
    [false, 'patch dnsrecordsets.connectivity.tanzu.vmware.com -n default'],
    [true, 'update configmaps/coredns -n kube-system'],
    [false, 'update configmaps/other -n kube-system'],
    [false, 'list secrets -n apps'],
    // The signed zones' keys (ADR 0106): the one Secret, by name, in the records namespace.
    [true, 'watch secrets/capi-dns-dnssec-keys -n capi-dns'],
    [true, 'patch secrets/capi-dns-dnssec-keys -n capi-dns'],
    [true, 'delete secrets/capi-dns-dnssec-keys -n capi-dns'],
    [false, 'patch secrets/other -n capi-dns'],
    [false, 'list secrets -n capi-dns'],
    [false, 'update secrets/capi-dns-dnssec-keys -n capi-dns'],
    // spec.gatewayRef: Gateways and the routes whose host names are published, read only, cluster-wide.
    [true, 'watch gateways.gateway.networking.k8s.io -A'],
    [true, 'list httproutes.gateway.networking.k8s.io -A'],
    [true, 'watch grpcroutes.gateway.networking.k8s.io -A'],
    [true, 'watch tlsroutes.gateway.networking.k8s.io -A'],
    [false, 'get gateways.gateway.networking.k8s.io -n infra'],
    [false, 'patch gateways.gateway.networking.k8s.io --subresource=status -n infra'],
    [false, 'update httproutes.gateway.networking.k8s.io -n shop'],
    [false, 'watch tcproutes.gateway.networking.k8s.io -A'],
    [false, 'watch referencegrants.gateway.networking.k8s.io -A'],
  ])('operator in a workload cluster may (%s) %s', async (allowed, verbAndResource) => {
    expect(await canI(WORKLOAD, 'capi-dns-controller', verbAndResource.split(' '))).toBe(allowed);
  });

  it.each([
    [true, 'watch serviceexports.multicluster.x-k8s.io -A'],
    [false, 'patch serviceexports.multicluster.x-k8s.io -n apps'],
    [true, 'patch serviceexports.multicluster.x-k8s.io --subresource=status -n apps'],
    [false, 'update serviceexports.multicluster.x-k8s.io --subresource=status -n apps'],
    [true, 'patch serviceimports.multicluster.x-k8s.io -n other'],
    [true, 'delete serviceimports.multicluster.x-k8s.io -n other'],
    [false, 'update serviceimports.multicluster.x-k8s.io -n other'],
    [true, 'create services -n other'],
    [true, 'patch endpointslices.discovery.k8s.io -n other'],
    [false, 'get services -n other'],
    [true, 'patch clusterproperties.about.k8s.io'],
    [true, 'get customresourcedefinitions.apiextensions.k8s.io/clusterproperties.about.k8s.io'],
    [false, 'get customresourcedefinitions.apiextensions.k8s.io/serviceimports.multicluster.x-k8s.io'],
    [false, 'delete customresourcedefinitions.apiextensions.k8s.io/clusterproperties.about.k8s.io'],
  ])(
    'operator in a ClusterSet member (config/rbac/workload-access/clusterset) may (%s) %s',
    async (allowed, verbAndResource) => {
      expect(await canI(MEMBER, 'capi-dns-controller', verbAndResource.split(' '))).toBe(allowed);
    },
  );

  it('examples/gateway-api-shop.yaml: a Gateway and two HTTPRoutes (one to a ServiceImport, GEP-1748), with the Gateway API CRDs', async () => {
    for (const ns of ['infra', 'shop']) await ensureNamespace(kubeConfigOf(info, WORKLOAD), ns);
    expect(appliedObjects(await dryRun(WORKLOAD, ['-f', 'examples/gateway-api-shop.yaml']))).toEqual([
      'gateway.gateway.networking.k8s.io/edge',
      'httproute.gateway.networking.k8s.io/cart',
      'httproute.gateway.networking.k8s.io/shop',
      'namespace/infra',
      'namespace/shop',
    ]);
  });

  it('examples/mcs-serviceexport.yaml: a Service and its ServiceExport, on a member with the MCS CRDs', async () => {
    await kubectl(MEMBER, ['create', 'namespace', 'projectcontour']).catch((err: unknown) => {
      if (!String(err).includes('AlreadyExists')) throw err;
    });
    expect(appliedObjects(await dryRun(MEMBER, ['-f', 'examples/mcs-serviceexport.yaml']))).toEqual([
      'service/kuard-mcs',
      'serviceexport.multicluster.x-k8s.io/kuard-mcs',
    ]);
  });
});
