// The walkthrough with real pods, as a user runs it: `kubectl apply -k
// config/default` on the management cluster and `config/workload` on each
// workload cluster (a kustomize `images:` overlay points them at the images
// of `npm run images`, loaded on every node), the real CoreDNS Deployment
// whose ConfigMap the operator patches, kuard from examples/ with the envoy
// LoadBalancer status a cloud controller would write (an address cluster-a's
// kube-proxy sends to the kuard pod), the GatewayDNS from examples/, and the
// README's curl from a pod of cluster-b. Needs root (testenv --nodes).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kubectl } from '../../demo/kubectl.js';
import { KUARD_NAME, NAMESPACE } from '../../demo/walkthrough.js';
import { registerWorkloadCluster } from '../support/capi.js';
import type { BuiltImage, ImageName } from '../support/images.js';
import { eventually } from '../support/kube.js';
import { imageRef, startWithNodes } from '../support/nodes.js';
import { binPath, repoRoot } from '../support/paths.js';
import type { TestEnv } from '../support/testenv.js';

const WORKLOADS = ['cluster-a', 'cluster-b'];

/**
 * A kustomization of base with the `images:` entries that point at the locally
 * built images (kustomize takes a base outside the overlay only as a relative path).
 */
function overlay(dir: string, name: string, base: string, images: [string, string][]): string {
  const folder = path.join(dir, name);
  const entries = images
    .map(([name, ref]) => {
      const colon = ref.lastIndexOf(':');
      return `  - name: ${name}\n    newName: ${ref.slice(0, colon)}\n    newTag: "${ref.slice(colon + 1)}"\n`;
    })
    .join('');
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    path.join(folder, 'kustomization.yaml'),
    `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ${path.isAbsolute(base) ? path.relative(folder, base) : base}\nimages:\n${entries}`,
  );
  return folder;
}

describe('the walkthrough with real pods', () => {
  let env: TestEnv | undefined;
  let images: Map<string, BuiltImage>;
  let dir: string;
  const kubectl = (cluster: string): Kubectl =>
    new Kubectl(binPath('kubectl'), env!.cluster(cluster).kubeconfig);
  const ref = (name: ImageName): string => imageRef(images, name);

  beforeAll(async () => {
    ({ env, images } = await startWithNodes(WORKLOADS));
    dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-real-pods-'));
  }, 360_000);

  afterAll(async () => {
    await env?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  /** The README's curl from a pod of cluster-b; throws unless kuard answers. */
  const curlFromClusterB = async (name: string): Promise<string> => {
    const out = await kubectl('cluster-b').run([
      'run',
      name,
      '-i',
      '--rm',
      `--image=${ref('curl')}`,
      '--restart=Never',
      '--',
      'curl',
      '-sS',
      '--max-time',
      '5',
      `http://${KUARD_NAME}`,
    ]);
    if (!out.includes('kuard: hello from')) throw new Error(`no answer from kuard: ${out}`);
    return out;
  };

  it('applies config/default and config/workload; the operator and dns-server Deployments become Available', async () => {
    const root = repoRoot();
    const management = kubectl('management');
    // Cluster API's Cluster CRD, as on any management cluster.
    await management.run(['apply', '-f', path.join(root, 'test', 'fixtures')]);
    const controller = overlay(dir, 'default', path.join(root, 'config', 'default'), [
      ['ghcr.io/capi-dns/capi-dns-controller', ref('capi-dns-controller')],
    ]);
    await management.run(['apply', '-k', controller]);
    const workload = overlay(dir, 'workload', path.join(root, 'config', 'workload'), [
      ['ghcr.io/capi-dns/dns-server', ref('dns-server')],
    ]);
    for (const cluster of WORKLOADS) await kubectl(cluster).run(['apply', '-k', workload]);
    await management.run([
      '-n',
      'capi-dns-system',
      'wait',
      'deployment/capi-dns-controller',
      '--for=condition=Available',
      '--timeout=120s',
    ]);
    for (const cluster of WORKLOADS)
      await kubectl(cluster).run([
        '-n',
        'capi-dns',
        'wait',
        'deployment/capi-dns-server',
        '--for=condition=Available',
        '--timeout=120s',
      ]);
  }, 300_000);

  it('runs CoreDNS in each workload cluster and registers the clusters the way Cluster API does', async () => {
    const template = readFileSync(path.join(repoRoot(), 'test', 'e2e', 'manifests', 'coredns.yaml'), 'utf8');
    for (const cluster of WORKLOADS) {
      const file = path.join(dir, `coredns-${cluster}.yaml`);
      writeFileSync(
        file,
        template.replaceAll('COREDNS_IMAGE', ref('coredns')).replaceAll('DNS_IP', env!.node(cluster).dnsIP),
      );
      await kubectl(cluster).run(['apply', '-f', file]);
      // Pods of the operator read this kubeconfig: it names the API server as pods reach it.
      await registerWorkloadCluster(env!.kubeConfig('management'), {
        namespace: NAMESPACE,
        cluster,
        kubeconfigPath: env!.node(cluster).kubeconfig,
      });
    }
    for (const cluster of WORKLOADS)
      await kubectl(cluster).run([
        '-n',
        'kube-system',
        'wait',
        'deployment/coredns',
        '--for=condition=Available',
        '--timeout=120s',
      ]);
  }, 300_000);

  it('publishes kuard of cluster-a and the operator patches the real CoreDNS ConfigMaps', async () => {
    const root = repoRoot();
    const a = kubectl('cluster-a');
    const kuardDir = path.join(dir, 'kuard');
    overlay(dir, 'kuard', 'kuard.yaml', [['gcr.io/kuar-demo/kuard-amd64', ref('kuard')]]);
    writeFileSync(path.join(kuardDir, 'kuard.yaml'), readFileSync(path.join(root, 'examples', 'kuard.yaml')));
    await a.run(['apply', '-k', kuardDir]);
    await a.run([
      '-n',
      'projectcontour',
      'wait',
      'deployment/kuard',
      '--for=condition=Available',
      '--timeout=120s',
    ]);
    // What a cloud controller writes: an address that every node routes to
    // cluster-a's node, where kube-proxy sends it to the kuard pod.
    const address = env!.node('cluster-a').loadBalancerCIDR.replace(/0\/24$/, '10');
    await a.run([
      '-n',
      'projectcontour',
      'patch',
      'service',
      'envoy',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { loadBalancer: { ingress: [{ ip: address }] } } }),
    ]);
    const management = kubectl('management');
    await management.run(['-n', NAMESPACE, 'label', 'cluster', 'cluster-a', 'cluster-b', 'hasContour=true']);
    await management.run(['apply', '-f', path.join(root, 'examples', 'dev-team-gateway-dns.yaml')]);
    await management.run([
      '-n',
      NAMESPACE,
      'wait',
      'gatewaydns/dev-team-gateway-dns',
      '--for=condition=Ready',
      '--timeout=60s',
    ]);
    for (const cluster of WORKLOADS) {
      await eventually(
        async () => {
          const corefile = await kubectl(cluster).run([
            '-n',
            'kube-system',
            'get',
            'configmap',
            'coredns',
            '-o',
            'jsonpath={.data.Corefile}',
          ]);
          if (!corefile.includes('xcc.test:53')) throw new Error(`${cluster}: Corefile not patched yet`);
        },
        30_000,
        500,
      );
    }
  }, 300_000);

  it('curls kuard by name from a pod of cluster-b: kubectl run … --image=<curl image> -- curl http://kuard…', async () => {
    const began = Date.now();
    // kubelet updates a ConfigMap volume on its next sync of the pod (up to a
    // minute), and CoreDNS reloads the Corefile 2 s later.
    const body = await eventually(() => curlFromClusterB('kuard-test'), 150_000, 2_000);
    process.stderr.write(`curl from a cluster-b pod answered ${Date.now() - began} ms after the first try\n`);
    expect(body).toContain(`(${KUARD_NAME}/)`);
  }, 200_000);

  it('replaces a deleted operator pod; with two replicas the Lease moves to the standby', async () => {
    const management = kubectl('management');
    const ns = ['-n', 'capi-dns-system'];
    await management.run([...ns, 'scale', 'deployment/capi-dns-controller', '--replicas=2']);
    await management.run([...ns, 'rollout', 'status', 'deployment/capi-dns-controller', '--timeout=120s']);
    const holder = async (): Promise<string> =>
      management.run([...ns, 'get', 'lease', 'capi-dns-controller', '-o', 'jsonpath={.spec.holderIdentity}']);
    const leader = await eventually(holder, 30_000, 500);
    expect(leader).toMatch(/^capi-dns-controller-/);
    await management.run([...ns, 'delete', 'pod', leader, '--wait=false']);
    const began = Date.now();
    const next = await eventually(
      async () => {
        const h = await holder();
        if (h === leader || h === '') throw new Error(`the Lease is still held by ${h}`);
        return h;
      },
      60_000,
      500,
    );
    process.stderr.write(`operator leader pod deleted → Lease held by ${next}: ${Date.now() - began} ms\n`);
    await management.run([...ns, 'rollout', 'status', 'deployment/capi-dns-controller', '--timeout=120s']);
    await curlFromClusterB('kuard-test-after-operator');
  }, 300_000);

  it('keeps answering while a dns-server pod of cluster-b is deleted (two replicas, readiness)', async () => {
    const b = kubectl('cluster-b');
    const pods = (
      await b.run([
        '-n',
        'capi-dns',
        'get',
        'pods',
        '-l',
        'app.kubernetes.io/name=capi-dns-server',
        '-o',
        'name',
      ])
    )
      .split(/\s+/)
      .filter(Boolean);
    expect(pods.length).toBe(2);
    await b.run(['-n', 'capi-dns', 'delete', pods[0]!, '--wait=false']);
    await curlFromClusterB('kuard-test-dns-server-1');
    await b.run(['-n', 'capi-dns', 'rollout', 'status', 'deployment/capi-dns-server', '--timeout=120s']);
    await curlFromClusterB('kuard-test-dns-server-2');
  }, 300_000);
});
