// The walkthrough with real pods, as a user runs it: the steps of
// `npm run demo -- --pods` (demo/pods.ts), one test each, then what a
// platform team would try next: the operator pod serving the team, a dns-server pod
// and the CoreDNS pod deleted, and kuard still answering by name; a rolling
// restart of the dns-server losing no query; 100,000 records within the
// dns-server's memory limit. Needs root
// (testenv --nodes).
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { PodWalkthrough } from '../../demo/pods.js';
import { NAMESPACE } from '../../demo/walkthrough.js';
import { shardOfNamespace } from '../../operator/manager/sharding/assignment.js';
import { MEMBER_LABEL } from '../../operator/manager/sharding/membership.js';
import { shardLeaseName } from '../../operator/manager/sharding/shard-leases.js';
import { dig } from '../support/dns.js';
import { eventually } from '../support/kube.js';
import {
  changeFirstRecord,
  deleteGeneratedSets,
  generatedSets,
  putGeneratedSets,
} from '../support/recordsets.js';

describe('the walkthrough with real pods', () => {
  const w = new PodWalkthrough();

  afterAll(async () => {
    await w.stop();
  }, 120_000);

  // The steps build on each other: after a failed one the rest would only fail for its reason.
  let failed: string | undefined;
  for (const step of PodWalkthrough.steps)
    it(
      step.title,
      async () => {
        if (failed) throw new Error(`not run: the step "${failed}" failed`);
        const began = Date.now();
        try {
          await step.run(w);
        } catch (err) {
          failed = step.title;
          throw err;
        }
        process.stderr.write(`${step.title}: ${Date.now() - began} ms\n`);
      },
      360_000,
    );

  it("three operator replicas share the namespaces; a deleted pod's shards are held by the others", async () => {
    const management = w.kubectl('management');
    const ns = ['-n', 'capi-dns-system'];
    await management.run([...ns, 'rollout', 'status', 'deployment/capi-dns-controller', '--timeout=120s']);
    // config/operator: --shards=16, the Leases named after the default --leader-election-id.
    const lease = shardLeaseName('capi-dns-controller', shardOfNamespace(NAMESPACE, 16));
    const holder = async (): Promise<string> =>
      (await management.run([...ns, 'get', 'lease', lease, '-o', 'jsonpath={.spec.holderIdentity}'])).trim();
    const members = async (): Promise<string[]> =>
      (
        await management.run([
          ...ns,
          'get',
          'lease',
          '-l',
          `${MEMBER_LABEL}=capi-dns-controller`,
          '-o',
          'jsonpath={.items[*].spec.holderIdentity}',
        ])
      )
        .trim()
        .split(/\s+/)
        .filter(Boolean);
    await eventually(async () => expect(await members()).toHaveLength(3), 60_000, 500);
    const owner = await eventually(
      async () => {
        const h = await holder();
        if (!h) throw new Error(`the Lease ${lease} is not held yet`);
        return h;
      },
      60_000,
      500,
    );
    expect(owner).toMatch(/^capi-dns-controller-/);
    // Deleted: the pod leaves cleanly (SIGTERM), so it gives its shards up at once.
    await management.run([...ns, 'delete', 'pod', owner, '--wait=false']);
    const began = Date.now();
    const next = await eventually(
      async () => {
        const h = await holder();
        if (h === owner || h === '') throw new Error(`the Lease ${lease} is still held by ${h || 'nobody'}`);
        return h;
      },
      60_000,
      200,
    );
    process.stderr.write(
      `operator pod serving ${NAMESPACE} deleted → its shard held by ${next}: ${Date.now() - began} ms\n`,
    );
    await management.run([...ns, 'rollout', 'status', 'deployment/capi-dns-controller', '--timeout=120s']);
    await w.curlFromClusterB('kuard-test-after-operator');
  }, 300_000);

  it('keeps answering while a dns-server pod of cluster-b is deleted (two replicas, readiness)', async () => {
    const b = w.kubectl('cluster-b');
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
    await w.curlFromClusterB('kuard-test-dns-server-1');
    await b.run(['-n', 'capi-dns', 'rollout', 'status', 'deployment/capi-dns-server', '--timeout=120s']);
    await w.curlFromClusterB('kuard-test-dns-server-2');
  }, 300_000);

  it('loses no query across a rolling restart of the dns-server Deployment (lame duck)', async () => {
    const b = w.kubectl('cluster-b');
    const node = w.requireEnv().cluster('cluster-b').node;
    if (!node) throw new Error('cluster-b has no node');
    const ip = (
      await b.run(['-n', 'capi-dns', 'get', 'service', 'capi-dns-server', '-o', 'jsonpath={.spec.clusterIP}'])
    ).trim();
    const name = 'kuard.gateway.cluster-a.dev-team.clusters.xcc.test';
    // From cluster-b's node: through kube-proxy's rules to whichever dns-server pod is an endpoint.
    const ask = (tcp: boolean) =>
      new Promise<string>((resolve) => {
        execFile(
          'ip',
          [
            'netns',
            'exec',
            node.netns,
            'dig',
            `@${ip}`,
            '+short',
            '+tries=1',
            '+time=1',
            ...(tcp ? ['+tcp'] : []),
            name,
            'A',
          ],
          (_err, stdout) => resolve(stdout.trim()),
        );
      });
    const want = await ask(false);
    expect(want).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    let stop = false;
    const lost: string[] = [];
    let asked = 0;
    const loop = (async () => {
      for (let i = 0; !stop; i++) {
        const tcp = i % 2 === 1;
        const got = await ask(tcp);
        asked++;
        if (got !== want) lost.push(`${tcp ? 'tcp' : 'udp'} #${i}: ${got || '(no answer)'}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const began = Date.now();
    await b.run(['-n', 'capi-dns', 'rollout', 'restart', 'deployment/capi-dns-server']);
    await b.run(['-n', 'capi-dns', 'rollout', 'status', 'deployment/capi-dns-server', '--timeout=180s']);
    // The last old pod's lame duck ends after the rollout reports done.
    await new Promise((r) => setTimeout(r, 7000));
    stop = true;
    await loop;
    process.stderr.write(
      `rolling restart of the dns-server (${Date.now() - began} ms): ${asked} queries over UDP and TCP, ${lost.length} lost ${lost.slice(0, 5).join('; ')}\n`,
    );
    expect(asked).toBeGreaterThan(50);
    expect(lost).toEqual([]);
  }, 300_000);

  it('holds 20,000 and then 100,000 records within the memory limit config/ ships: loaded and rebuilt, no restart', async () => {
    const b = w.kubectl('cluster-b');
    const api = w.requireEnv().kubeConfig('cluster-b').makeApiClient(CustomObjectsApi);
    const node = w.requireEnv().cluster('cluster-b').node;
    if (!node) throw new Error('cluster-b has no node');
    const limit = (
      await b.run([
        '-n',
        'capi-dns',
        'get',
        'deployment',
        'capi-dns-server',
        '-o',
        'jsonpath={.spec.template.spec.containers[0].resources.limits.memory}',
      ])
    ).trim();
    // Each pod answers, not only the one kube-proxy picks: ask every pod IP in turn.
    const podsOf = async () =>
      (
        await b.run([
          '-n',
          'capi-dns',
          'get',
          'pods',
          '-l',
          'app.kubernetes.io/name=capi-dns-server',
          '-o',
          'jsonpath={range .items[*]}{.metadata.name} {.metadata.uid} {.status.podIP} {.status.containerStatuses[0].restartCount} {.status.containerStatuses[0].lastState.terminated.reason}{"\\n"}{end}',
        ])
      )
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [name, uid, podIP, restarts, lastReason] = line.split(' ');
          return { name: name!, uid: uid!, podIP: podIP!, restarts: Number(restarts), lastReason };
        });
    const dig = (server: string, name: string) =>
      new Promise<string>((resolve) => {
        execFile(
          'ip',
          [
            'netns',
            'exec',
            node.netns,
            'dig',
            `@${server}`,
            '-p',
            '5353',
            '+short',
            '+tries=1',
            '+time=2',
            name,
            'A',
          ],
          (_err, stdout) => resolve(stdout.trim()),
        );
      });
    // The pod's memory cgroup (cgroup v1, kubelet's cgroupfs driver): the most it ever used, page cache included.
    const peakMiB = (uid: string): number => {
      const found = execFileSync('find', ['/sys/fs/cgroup/memory', '-type', 'd', '-name', `pod${uid}`], {
        encoding: 'utf8',
      })
        .split('\n')
        .filter(Boolean)[0];
      if (!found) return NaN;
      return Number(readFileSync(path.join(found, 'memory.max_usage_in_bytes'), 'utf8')) / 2 ** 20;
    };
    const before = await podsOf();
    expect(before.length).toBe(2);
    try {
      for (const wanted of [20_000, 100_000]) {
        const { sets, records } = generatedSets(wanted);
        const began = Date.now();
        await putGeneratedSets(api, sets);
        const last = sets.at(-1)!.spec.records.find((r) => r.type === 'A' && !r.name.startsWith('*'))!;
        for (const pod of before)
          await eventually(
            async () => {
              const got = await dig(pod.podIP, last.name);
              if (!last.values.includes(got.split('\n')[0]!))
                throw new Error(`${pod.name}: ${got || '(no answer)'}`);
            },
            180_000,
            500,
          );
        const loadedMs = Date.now() - began;
        const value = `10.255.0.${wanted % 250}`;
        const changed = await changeFirstRecord(api, sets[0]!.metadata.name, value);
        for (const pod of before)
          await eventually(
            async () => {
              const got = await dig(pod.podIP, changed);
              if (got !== value) throw new Error(`${pod.name}: ${changed} is ${got || '(no answer)'}`);
            },
            120_000,
            500,
          );
        const after = await podsOf();
        process.stderr.write(
          `${records} records: loaded by both dns-server pods in ${loadedMs} ms and rebuilt; peak memory of each pod (cgroup) ${after.map((p) => `${peakMiB(p.uid).toFixed(0)} MiB`).join(', ')} of ${limit}\n`,
        );
        expect(after.map((p) => [p.name, p.restarts, p.lastReason ?? ''])).toEqual(
          before.map((p) => [p.name, 0, '']),
        );
      }
    } finally {
      await deleteGeneratedSets(api);
    }
  }, 900_000);

  it("answers again after cluster-b's CoreDNS pod is deleted: its Deployment starts one on the patched Corefile", async () => {
    const b = w.kubectl('cluster-b');
    const ns = ['-n', 'kube-system'];
    const readyPods = async (): Promise<string[]> =>
      (
        await b.run([
          ...ns,
          'get',
          'pods',
          '-l',
          'k8s-app=kube-dns',
          '-o',
          'jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}',
        ])
      )
        .split('\n')
        .filter((line) => line.endsWith(' True'))
        .map((line) => line.split(' ')[0]!);
    const [old, ...others] = await readyPods();
    expect(old).toBeDefined();
    expect(others).toEqual([]);
    const began = Date.now();
    await b.run([...ns, 'delete', 'pod', old!, '--wait=true']);
    const replacement = await eventually(
      async () => {
        const ready = (await readyPods()).filter((p) => p !== old);
        if (ready.length === 0) throw new Error(`no Ready CoreDNS pod has replaced ${old} yet`);
        return ready[0]!;
      },
      120_000,
      500,
    );
    const readyMs = Date.now() - began;
    // The operator's block is in the ConfigMap the new pod mounted: nothing had to patch it again.
    expect(await w.corefile('cluster-b')).toContain('xcc.test:53');
    // Until kube-proxy has the new pod behind the kube-dns Service, a lookup may still fail.
    await eventually(() => w.curlFromClusterB('kuard-test-after-coredns'), 60_000, 1_000);
    process.stderr.write(
      `CoreDNS pod ${old} deleted → ${replacement} Ready ${readyMs} ms, kuard answered by name ${Date.now() - began} ms\n`,
    );
  }, 300_000);

  it("fails over in cluster-b alone when iptables in cluster-b's node drops cluster-a's gateway; the GatewayDNS status says who from where", async () => {
    const management = w.kubectl('management');
    const env = w.requireEnv();
    const shared = `kuard.gateway.${NAMESPACE}.clusters.xcc.test`;
    const a = w.kuardAddress('cluster-a');
    const b = w.kuardAddress('cluster-b');
    // kuard in cluster-b too; the clusters' regions make cluster-a the first tier, cluster-b the second.
    await w.deployKuard('cluster-b');
    await management.run(['-n', NAMESPACE, 'label', 'cluster', 'cluster-a', 'region=eu', '--overwrite']);
    await management.run(['-n', NAMESPACE, 'label', 'cluster', 'cluster-b', 'region=us', '--overwrite']);
    const policy = {
      answer: 'failover',
      failover: [{ clusterSelector: { matchLabels: { region: 'eu' } } }],
      healthCheck: { protocol: 'HTTP', path: '/healthy', periodSeconds: 1, timeoutSeconds: 1 },
    };
    const gatewayDns = ['-n', NAMESPACE, 'gatewaydns/dev-team-gateway-dns'];
    await management.run(['patch', ...gatewayDns, '--type=merge', '-p', JSON.stringify({ spec: policy })]);
    // Each cluster's dns-server Service, as the host reaches it (a route to each service range).
    const dnsIp: Record<string, string> = {};
    for (const cluster of ['cluster-a', 'cluster-b'])
      dnsIp[cluster] = (
        await w
          .kubectl(cluster)
          .run(['-n', 'capi-dns', 'get', 'service', 'capi-dns-server', '-o', 'jsonpath={.spec.clusterIP}'])
      ).trim();
    const answers = async (cluster: string) =>
      (await dig(53, ['+short', '+tries=1', '+time=1', shared, 'A'], dnsIp[cluster]!)).stdout
        .trim()
        .split('\n')
        .filter(Boolean)
        .sort();
    const answering = (cluster: string, want: string[], timeoutMs = 60_000) =>
      eventually(
        async () => {
          const got = await answers(cluster);
          if (JSON.stringify(got) !== JSON.stringify(want))
            throw new Error(`${cluster} answers ${got.join(' ') || 'nothing'}, want ${want.join(' ')}`);
        },
        timeoutMs,
        100,
      );
    const status = async () =>
      JSON.parse(await management.run(['get', ...gatewayDns, '-o', 'json'])) as {
        status?: {
          conditions?: { type: string; status: string; reason: string; message: string }[];
          clusters?: { cluster: string; health?: unknown }[];
        };
      };
    const degraded = async () => (await status()).status?.conditions?.find((c) => c.type === 'Degraded');
    await answering('cluster-a', [a]);
    await answering('cluster-b', [a]);
    await eventually(
      async () => expect(await degraded()).toMatchObject({ reason: 'AllHealthy' }),
      60_000,
      500,
    );

    const netns = env.node('cluster-b').netns;
    // The dns-server pods' probes leave cluster-b's node through its FORWARD chain, the node's own through OUTPUT.
    const rules = [
      ['FORWARD', '-d', a, '-j', 'DROP'],
      ['OUTPUT', '-d', a, '-j', 'DROP'],
    ];
    const iptables = (op: '-I' | '-D', rule: string[]) =>
      execFileSync('ip', ['netns', 'exec', netns, 'iptables', op, ...rule], { stdio: 'pipe' });
    const began = Date.now();
    for (const rule of rules) iptables('-I', rule);
    try {
      await answering('cluster-b', [b], 20_000);
      const failoverMs = Date.now() - began;
      // cluster-a still reaches its own gateway: it keeps answering it, as its Kubernetes API always said.
      expect(await answers('cluster-a')).toEqual([a]);
      await eventually(
        async () =>
          expect(await degraded()).toMatchObject({
            status: 'True',
            reason: 'FailedOver',
            message:
              'cluster-a unhealthy from 1 of 2 reporting clusters (cluster-b); failed over from tier 0 to tier 1 (cluster-b) in cluster-b',
          }),
        30_000,
        500,
      );
      expect((await status()).status?.clusters?.find((c) => c.cluster === 'cluster-a')?.health).toEqual({
        healthyFrom: 1,
        reportingClusters: 2,
        unhealthyFrom: ['cluster-b'],
      });
      // A pod of cluster-b reaches kuard by the shared name through CoreDNS: cluster-b's own now.
      await eventually(
        async () => {
          const out = await w.curlInClusterB('kuard-failover-test', `http://${shared}`);
          if (!out.includes('kuard: hello from')) throw new Error(`no answer from kuard: ${out}`);
        },
        60_000,
        1_000,
      );
      process.stderr.write(
        `cluster-b's node cut off from cluster-a's gateway → cluster-b's dns-server answers cluster-b's: ${failoverMs} ms\n`,
      );
    } finally {
      for (const rule of rules) iptables('-D', rule);
    }
    const back = Date.now();
    await answering('cluster-b', [a], 20_000);
    process.stderr.write(
      `the rule removed → cluster-b answers cluster-a's gateway again: ${Date.now() - back} ms\n`,
    );
    await eventually(
      async () => expect(await degraded()).toMatchObject({ reason: 'AllHealthy' }),
      30_000,
      500,
    );
    const events = await management.run([
      '-n',
      NAMESPACE,
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=dev-team-gateway-dns',
      '-o',
      'jsonpath={.items[*].reason}',
    ]);
    expect(events.split(' ')).toEqual(expect.arrayContaining(['FailedOver', 'Recovered']));
    await management.run([
      'patch',
      ...gatewayDns,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { answer: null, failover: null, healthCheck: null } }),
    ]);
  }, 300_000);
});
