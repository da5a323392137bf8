// charts/capi-dns installed with Helm on clusters with real nodes (testenv
// --nodes), as charts/capi-dns/README.md tells a user: the management side by
// `helm install` on the management cluster; the workload side both ways,
// `helm install` into cluster-a directly and a ClusterResourceSet release in
// the Clusters' namespace that Cluster API applies into cluster-b; `helm test`
// of the direct release asks its dns-server a question. Then the
// state `kubectl apply -k` reaches (test/e2e/real-pods.test.ts): the operator
// Available, a GatewayDNS Ready, its name answered by both dns-servers; a
// `helm upgrade` of a value seen in the cluster; `helm uninstall` leaving only
// what the README says. Needs root.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { Kubectl } from '../../demo/kubectl.js';
import { installCoreDns } from '../../demo/install.js';
import { WORKLOAD_LABEL, WORKLOAD_LABEL_VALUE } from '../../scripts/clusterresourceset/generate.js';
import { registerWorkloadCluster } from '../support/capi.js';
import { dig } from '../support/dns.js';
import { CHART, Helm } from '../support/helm.js';
import type { BuiltImage } from '../support/images.js';
import { eventually, installCrds, readManifests } from '../support/kube.js';
import { imageRef, startWithNodes } from '../support/nodes.js';
import { binPath, repoRoot } from '../support/paths.js';
import type { TestEnv } from '../support/testenv.js';

const MANAGEMENT = 'management';
const DIRECT = 'cluster-a';
const BY_CRS = 'cluster-b';
const TEAM = 'dev-team';
const NAME = `kuard.gateway.${DIRECT}.${TEAM}.clusters.xcc.test`;
const WAIT = '--timeout=180s';

/** ghcr.io/capi-dns/dns-server:0.1.0-… as the chart's image values. */
function imageValues(images: Map<string, BuiltImage>, name: 'capi-dns-controller' | 'dns-server') {
  const ref = imageRef(images, name);
  const colon = ref.lastIndexOf(':');
  return { repository: ref.slice(0, colon), tag: ref.slice(colon + 1) };
}

describe('charts/capi-dns with Helm on real nodes', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-helm-'));
  let env: TestEnv | undefined;
  let images: Map<string, BuiltImage>;
  const kubectl = (cluster: string) => new Kubectl(binPath('kubectl'), env!.cluster(cluster).kubeconfig);
  const helm = (cluster: string) => new Helm(path.join(dir, 'helm'), env!.cluster(cluster).kubeconfig);
  const valuesFile = (name: string, values: object) => {
    const file = path.join(dir, `${name}.yaml`);
    writeFileSync(file, stringify(values));
    return file;
  };
  /** The workload side's values: the local image, and both replicas on the one node. */
  const workloadValues = () => ({
    dnsServer: {
      image: imageValues(images, 'dns-server'),
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: 'kubernetes.io/hostname',
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'capi-dns-server' } },
        },
      ],
    },
  });
  const answer = async (cluster: string): Promise<string> => {
    const ip = (
      await kubectl(cluster).run([
        '-n',
        'capi-dns',
        'get',
        'service',
        'capi-dns-server',
        '-o',
        'jsonpath={.spec.clusterIP}',
      ])
    ).trim();
    return (await dig(53, ['+short', NAME, 'A'], ip)).stdout.trim();
  };
  const lbAddress = () => env!.node(DIRECT).loadBalancerCIDR.replace(/0\/24$/, '10');

  afterAll(async () => {
    await env?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  // The steps build on each other: after a failed one the rest would only fail for its reason.
  let failed: string | undefined;
  const step = (title: string, fn: () => Promise<void>, timeoutMs = 300_000) =>
    it(
      title,
      async () => {
        if (failed) throw new Error(`not run: the step "${failed}" failed`);
        const began = Date.now();
        try {
          await fn();
        } catch (err) {
          failed = title;
          throw err;
        }
        process.stderr.write(`${title}: ${Date.now() - began} ms\n`);
      },
      timeoutMs,
    );

  step('management, cluster-a and cluster-b with a node each, CoreDNS in the workload clusters', async () => {
    ({ env, images } = await startWithNodes([DIRECT, BY_CRS]));
    await installCoreDns({ dir, env, images, kubectl: (c) => kubectl(c), wait: '180s' }, [DIRECT, BY_CRS]);
    const management = env.kubeConfig(MANAGEMENT);
    await installCrds(management, readManifests(path.join(repoRoot(), 'test', 'fixtures')));
    for (const cluster of [DIRECT, BY_CRS])
      await registerWorkloadCluster(management, {
        namespace: TEAM,
        cluster,
        kubeconfigPath: env.node(cluster).kubeconfig,
      });
  });

  step('helm install the management side: the operator is Available', async () => {
    const values = valuesFile('management', {
      operator: { image: imageValues(images, 'capi-dns-controller'), replicas: 2 },
    });
    await helm(MANAGEMENT).run([
      'install',
      'capi-dns',
      CHART,
      '-n',
      'capi-dns-system',
      '--create-namespace',
      '-f',
      values,
    ]);
    await kubectl(MANAGEMENT).run([
      '-n',
      'capi-dns-system',
      'wait',
      'deployment/capi-dns-controller',
      '--for=condition=Available',
      WAIT,
    ]);
  });

  step(
    'helm install the workload side into cluster-a, and by a ClusterResourceSet release in dev-team into cluster-b: both dns-servers Available',
    async () => {
      await helm(DIRECT).run([
        'install',
        'capi-dns-server',
        CHART,
        '-n',
        'capi-dns',
        '--create-namespace',
        '--set',
        'operator.enabled=false',
        '--set',
        'dnsServer.enabled=true',
        '-f',
        valuesFile('workload', workloadValues()),
      ]);
      await helm(MANAGEMENT).run([
        'install',
        'capi-dns-workload',
        CHART,
        '-n',
        TEAM,
        '--set',
        'operator.enabled=false',
        '--set',
        'clusterResourceSet.enabled=true',
        '-f',
        path.join(dir, 'workload.yaml'),
      ]);
      await kubectl(MANAGEMENT).run([
        '-n',
        TEAM,
        'label',
        'cluster',
        BY_CRS,
        `${WORKLOAD_LABEL}=${WORKLOAD_LABEL_VALUE}`,
      ]);
      await eventually(
        () => kubectl(BY_CRS).run(['-n', 'capi-dns', 'get', 'deployment/capi-dns-server']),
        120_000,
        500,
      );
      for (const cluster of [DIRECT, BY_CRS])
        await kubectl(cluster).run([
          '-n',
          'capi-dns',
          'wait',
          'deployment/capi-dns-server',
          '--for=condition=Available',
          WAIT,
        ]);
    },
  );

  step('helm test of the direct release: a pod asks the dns-server for the SOA of its zone', async () => {
    const out = await helm(DIRECT).run([
      'test',
      'capi-dns-server',
      '-n',
      'capi-dns',
      '--logs',
      '--timeout=120s',
    ]);
    expect(out).toMatch(/Phase:\s+Succeeded/);
    expect(out).toContain('the dns-server answers');
  });

  step(
    "a GatewayDNS for cluster-a's envoy Service is Ready, its name answered by both clusters' dns-servers",
    async () => {
      const a = kubectl(DIRECT);
      await a.run(['create', 'namespace', 'projectcontour']);
      await a.run(['-n', 'projectcontour', 'create', 'service', 'loadbalancer', 'envoy', '--tcp=80:8080']);
      await a.run([
        '-n',
        'projectcontour',
        'patch',
        'service',
        'envoy',
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status: { loadBalancer: { ingress: [{ ip: lbAddress() }] } } }),
      ]);
      const management = kubectl(MANAGEMENT);
      await management.run(['-n', TEAM, 'label', 'cluster', DIRECT, 'hasContour=true']);
      await management.run(['apply', '-f', path.join(repoRoot(), 'examples', 'dev-team-gateway-dns.yaml')]);
      await management.run([
        '-n',
        TEAM,
        'wait',
        'gatewaydns/dev-team-gateway-dns',
        '--for=condition=Ready',
        '--timeout=90s',
      ]);
      for (const cluster of [DIRECT, BY_CRS])
        await eventually(
          async () => {
            const got = await answer(cluster);
            if (got !== lbAddress()) throw new Error(`${cluster}'s dns-server answers ${got || 'nothing'}`);
          },
          60_000,
          500,
        );
    },
  );

  step('helm upgrade to 1 operator replica with --log-level=debug: the Deployment rolls out so', async () => {
    await helm(MANAGEMENT).run([
      'upgrade',
      'capi-dns',
      CHART,
      '-n',
      'capi-dns-system',
      '--reuse-values',
      '--set',
      'operator.replicas=1',
      '--set',
      'operator.extraArgs={--log-level=debug}',
    ]);
    const management = kubectl(MANAGEMENT);
    await management.run([
      '-n',
      'capi-dns-system',
      'rollout',
      'status',
      'deployment/capi-dns-controller',
      WAIT,
    ]);
    const pods = await eventually(
      async () => {
        const out = JSON.parse(
          await management.run([
            '-n',
            'capi-dns-system',
            'get',
            'pods',
            '-l',
            'app.kubernetes.io/name=capi-dns-controller',
            '-o',
            'json',
          ]),
        ) as {
          items: { metadata: { deletionTimestamp?: string }; spec: { containers: { args: string[] }[] } }[];
        };
        const live = out.items.filter((p) => !p.metadata.deletionTimestamp);
        if (live.length !== 1) throw new Error(`${live.length} operator pods, want 1`);
        return live;
      },
      60_000,
      500,
    );
    expect(pods[0]!.spec.containers[0]!.args).toContain('--log-level=debug');
    // The new replica serves the team: a change reaches the dns-servers.
    await management.run([
      '-n',
      TEAM,
      'wait',
      'gatewaydns/dev-team-gateway-dns',
      '--for=condition=Ready',
      WAIT,
    ]);
    expect(await answer(BY_CRS)).toBe(lbAddress());
  });

  step('helm uninstall leaves the CRDs and nothing of the chart', async () => {
    // What a user removes first, while the operator runs: its finalizer cleans the workload clusters.
    await kubectl(MANAGEMENT).run(['-n', TEAM, 'delete', 'gatewaydns/dev-team-gateway-dns', WAIT]);
    const releases: [string, string, string][] = [
      [MANAGEMENT, 'capi-dns', 'capi-dns-system'],
      [MANAGEMENT, 'capi-dns-workload', TEAM],
      [DIRECT, 'capi-dns-server', 'capi-dns'],
    ];
    /** Each release's objects, as kubectl get takes them (kind name [-n namespace]). */
    const released: { cluster: string; args: string[] }[] = [];
    for (const [cluster, release, namespace] of releases) {
      const manifest = await helm(cluster).run(['get', 'manifest', release, '-n', namespace]);
      for (const doc of manifest.split(/^---$/m)) {
        const kind = /^kind: (\S+)/m.exec(doc)?.[1];
        const name = /^ {2}name: (\S+)/m.exec(doc)?.[1];
        const ns = /^ {2}namespace: (\S+)/m.exec(doc)?.[1];
        if (kind && name) released.push({ cluster, args: [kind, name, ...(ns ? ['-n', ns] : [])] });
      }
      await helm(cluster).run(['uninstall', release, '-n', namespace, '--wait']);
    }
    expect(released.length).toBeGreaterThan(15);
    for (const { cluster, args } of released)
      expect(await kubectl(cluster).run(['get', ...args, '--ignore-not-found', '-o', 'name'])).toBe('');
    // The CRDs stay (Helm never deletes those of crds/), with what the operator wrote; the README says so.
    const crds = (await kubectl(MANAGEMENT).run(['get', 'crd', '-o', 'name'])).split('\n');
    expect(crds).toContain(
      'customresourcedefinition.apiextensions.k8s.io/gatewaydns.connectivity.tanzu.vmware.com',
    );
    const left = (
      await kubectl(MANAGEMENT).run([
        '-n',
        'capi-dns-system',
        'get',
        'all,configmaps,secrets,serviceaccounts,roles,rolebindings,leases',
        '-o',
        'name',
      ])
    )
      .split('\n')
      .filter(Boolean)
      .sort();
    process.stderr.write(`left in capi-dns-system after helm uninstall: ${left.join(' ')}\n`);
    // The namespace --create-namespace made, with what is in every namespace and the operator's Leases.
    expect(
      left.filter((o) => !/^lease\.coordination\.k8s\.io\/capi-dns-controller-(member|shard)-/.test(o)),
    ).toEqual(['configmap/kube-root-ca.crt', 'serviceaccount/default']);
    // cluster-a: the namespace, empty of ours (the GatewayDNS's finalizer deleted its record sets; the
    // dns-server pods' probe reports, owned by the pods, go with them through the garbage collector).
    await eventually(
      async () =>
        expect(
          await kubectl(DIRECT).run([
            '-n',
            'capi-dns',
            'get',
            'all,dnsrecordsets,configmaps,leases',
            '-o',
            'name',
          ]),
        ).toBe('configmap/kube-root-ca.crt\n'),
      30_000,
      500,
    );
    // cluster-b: Cluster API never deletes what a ClusterResourceSet applied; the README says so.
    expect(await kubectl(BY_CRS).run(['-n', 'capi-dns', 'get', 'deployment', '-o', 'name'])).toBe(
      'deployment.apps/capi-dns-server\n',
    );
  });
});
