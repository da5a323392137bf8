// Real nodes in the test environment (testenv --nodes, as root): a
// Deployment scheduled by the real kube-scheduler and run by a real kubelet,
// EndpointSlices written by the real controller-manager, a Service reached
// through kube-proxy, the kubernetes Service reached with the pod's own
// ServiceAccount token, and cluster-a's pods reached from a pod of cluster-b
// at a LoadBalancer address routed between the nodes. Then everything the
// nodes made is gone after stop.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import {
  AppsV1Api,
  CoreV1Api,
  DiscoveryV1Api,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { BuiltImage } from '../support/images.js';
import { eventually } from '../support/kube.js';
import { imageRef, nodeMemory, runPod, startWithNodes } from '../support/nodes.js';
import type { TestEnv } from '../support/testenv.js';

const NS = 'default';

/** curl in a pod, retrying refused connections: kube-proxy programs a Service within its 1 s sync. */
function curlArgs(url: string): string[] {
  return ['curl', '-sS', '--retry', '5', '--retry-all-errors', '--retry-delay', '1', '--max-time', '5', url];
}

describe('nodes in the test environment', () => {
  let env: TestEnv | undefined;
  let images: Map<string, BuiltImage>;
  let startMs = 0;

  beforeAll(async () => {
    const began = Date.now();
    ({ env, images } = await startWithNodes(['cluster-a', 'cluster-b']));
    startMs = Date.now() - began;
    process.stderr.write(`environment with 3 nodes ready (every node Ready) in ${startMs} ms\n`);
  }, 360_000);

  afterAll(async () => {
    await env?.stop();
  }, 120_000);

  const e = (): TestEnv => {
    if (!env) throw new Error('no test environment');
    return env;
  };

  it('gives every cluster one Ready node with its own addresses', async () => {
    const cidrs = new Set<string>();
    for (const c of e().info.clusters) {
      const node = e().node(c.name);
      const got = await e().kubeConfig(c.name).makeApiClient(CoreV1Api).readNode({ name: node.name });
      expect(got.status?.conditions?.find((x) => x.type === 'Ready')?.status).toBe('True');
      expect(got.status?.addresses?.find((a) => a.type === 'InternalIP')?.address).toBe(node.ip);
      expect(got.status?.nodeInfo?.kubeletVersion).toBe('v1.35.4');
      for (const cidr of [node.podCIDR, node.serviceCIDR, node.loadBalancerCIDR]) cidrs.add(cidr);
    }
    expect(cidrs.size).toBe(9); // no range shared between clusters
    const memory = nodeMemory(e().node('cluster-a'));
    process.stderr.write(`node memory (RSS MiB): ${JSON.stringify(memory)}\n`);
  });

  it('runs a Deployment: scheduled, Running, EndpointSlices from the controller-manager', async () => {
    const kc = e().kubeConfig('cluster-a');
    const began = Date.now();
    await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
      namespace: NS,
      body: {
        metadata: { name: 'kuard' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'kuard' } },
          template: {
            metadata: { labels: { app: 'kuard' } },
            spec: {
              containers: [
                {
                  name: 'kuard',
                  image: imageRef(images, 'kuard'),
                  imagePullPolicy: 'IfNotPresent',
                  args: ['--cluster', 'cluster-a'],
                  ports: [{ containerPort: 8080 }],
                  readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 },
                },
              ],
            },
          },
        },
      },
    });
    await kc.makeApiClient(CoreV1Api).createNamespacedService({
      namespace: NS,
      body: {
        metadata: { name: 'kuard' },
        spec: { type: 'LoadBalancer', selector: { app: 'kuard' }, ports: [{ port: 80, targetPort: 8080 }] },
      },
    });
    const core = kc.makeApiClient(CoreV1Api);
    const pods = await eventually(
      async () => {
        const list = await core.listNamespacedPod({ namespace: NS, labelSelector: 'app=kuard' });
        const running = list.items.filter((p) => p.status?.phase === 'Running');
        if (running.length !== 2) throw new Error(`${running.length} of 2 kuard pods Running`);
        return running;
      },
      60_000,
      100,
    );
    process.stderr.write(`Deployment created → 2 pods Running: ${Date.now() - began} ms\n`);
    expect(pods.map((p) => p.spec?.nodeName)).toEqual(['cluster-a-node', 'cluster-a-node']);
    const podCidr = e()
      .node('cluster-a')
      .podCIDR.replace(/\.0\/24$/, '.');
    const ips = pods.map((p) => p.status?.podIP ?? '').sort();
    for (const ip of ips) expect(ip.startsWith(podCidr)).toBe(true);

    const slices = await eventually(
      async () => {
        const list = await kc
          .makeApiClient(DiscoveryV1Api)
          .listNamespacedEndpointSlice({ namespace: NS, labelSelector: 'kubernetes.io/service-name=kuard' });
        const ready = list.items.flatMap((s) =>
          (s.endpoints ?? []).filter((ep) => ep.conditions?.ready).flatMap((ep) => ep.addresses),
        );
        if (ready.length !== 2) throw new Error(`${ready.length} ready endpoints`);
        return list.items;
      },
      60_000,
      100,
    );
    process.stderr.write(`Deployment created → 2 ready endpoints: ${Date.now() - began} ms\n`);
    expect(slices[0]?.metadata?.labels?.['endpointslice.kubernetes.io/managed-by']).toBe(
      'endpointslice-controller.k8s.io',
    );
    expect(slices.flatMap((s) => (s.endpoints ?? []).flatMap((ep) => ep.addresses)).sort()).toEqual(ips);
  }, 120_000);

  it("reaches the Service's ClusterIP from a pod (kube-proxy)", async () => {
    const kc = e().kubeConfig('cluster-a');
    const svc = await kc.makeApiClient(CoreV1Api).readNamespacedService({ name: 'kuard', namespace: NS });
    const began = Date.now();
    const out = await runPod(kc, NS, 'curl-cluster-ip', {
      image: imageRef(images, 'curl'),
      // kube-proxy programs a Service's rules within its sync period (1 s)
      // after the endpoints change; until then the ClusterIP refuses.
      args: curlArgs(`http://${svc.spec?.clusterIP}/`),
    });
    process.stderr.write(`curl pod created → ended: ${Date.now() - began} ms\n`);
    expect(out).toContain('kuard: hello from cluster-a');
  }, 90_000);

  it('reaches the kubernetes Service with the pod ServiceAccount token (in-cluster config)', async () => {
    const kc = e().kubeConfig('cluster-a');
    // What @kubernetes/client-node's loadFromCluster does: the injected host and
    // port, the mounted CA and token.
    const script = `
      const fs = require('node:fs'); const https = require('node:https');
      const dir = '/var/run/secrets/kubernetes.io/serviceaccount/';
      https.get({ host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT,
        path: '/api/v1/namespaces/default/serviceaccounts/default', ca: fs.readFileSync(dir + 'ca.crt'),
        headers: { authorization: 'Bearer ' + fs.readFileSync(dir + 'token', 'utf8') } }, (res) => {
        let body = ''; res.on('data', (d) => (body += d));
        res.on('end', () => { console.log(res.statusCode, process.env.KUBERNETES_SERVICE_HOST, body.length); });
      }).on('error', (err) => { console.error(err.message); process.exit(1); });`;
    const out = await runPod(kc, NS, 'in-cluster', {
      image: imageRef(images, 'kuard'),
      command: ['node', '-e', script],
    });
    // 403: authenticated as system:serviceaccount:default:default, which RBAC
    // lets read nothing; TLS to the ClusterIP was verified with the mounted CA.
    expect(out).toMatch(
      new RegExp(
        `^403 ${e()
          .node('cluster-a')
          .serviceCIDR.replace(/0\/24$/, '1')} `,
      ),
    );
  }, 90_000);

  it("reaches cluster-a's pods from a pod of cluster-b at a LoadBalancer address routed to cluster-a's node", async () => {
    const a = e().node('cluster-a');
    const address = a.loadBalancerCIDR.replace(/0\/24$/, '10');
    // The status a cloud controller would write; kube-proxy on cluster-a's node
    // sends that address to the Service's endpoints.
    await e()
      .kubeConfig('cluster-a')
      .makeApiClient(CoreV1Api)
      .patchNamespacedServiceStatus(
        { name: 'kuard', namespace: NS, body: { status: { loadBalancer: { ingress: [{ ip: address }] } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    const out = await runPod(e().kubeConfig('cluster-b'), NS, 'curl-load-balancer', {
      image: imageRef(images, 'curl'),
      args: curlArgs(`http://${address}/`),
    });
    expect(out).toContain('kuard: hello from cluster-a');
  }, 90_000);

  it('removes every process, namespace, mount, cgroup and link on stop', async () => {
    const info = e().info;
    const nodes = info.clusters.map((c) => c.node!);
    await e().stop();
    env = undefined;
    for (const n of nodes) {
      expect(existsSync(`/run/netns/${n.netns}`)).toBe(false);
      expect(existsSync(n.containerd)).toBe(false);
    }
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(info.dir);
    const cgroups = execFileSync('ls', ['/sys/fs/cgroup/pids'], { encoding: 'utf8' });
    for (const n of nodes) expect(cgroups).not.toContain(`${n.netns}`);
    const links = execFileSync('ip', ['-o', 'addr'], { encoding: 'utf8' });
    expect(links).not.toContain(nodes[0]!.hostIP);
    const ps = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
    expect(ps).not.toContain(info.dir);
  }, 120_000);
});
