// The zone beyond the fleet (issue 43, ADR 0215) on real API servers: three
// workload clusters (two of the namespace shop, one of pay), each with a
// dns-server of its own on a loopback address
// and port 53 (as a load balancer would expose it), and the exposed Service
// capi-dns-server-external whose load-balancer address (set by the test, as a
// cloud's controller would) is that dns-server's. A DNSZone with
// spec.nameservers.expose gets both as its NS, with glue, in its status and in
// what both dns-servers serve, with the SOA serial each serves (reported by
// the dns-server, moving after a change); each answers from its own view (localFirst: its
// own cluster's address); a cluster whose exposed dns-server is gone (Service
// deleted, no ingress, API server stopped) leaves the NS set within seconds,
// measured; each namespace's part is a zone cut to its own clusters' servers
// (a referral from the others); and an unbound outside every cluster follows
// the delegation and gets both namespaces' names.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { EXPOSED_DNS_SERVICE, servedSerialsName, type DNSZone } from '../../api/index.js';
import { apply, eventually, statusCode } from '../support/kube.js';
import {
  deleteGatewayDns,
  setLoadBalancer,
  startOperator,
  type OperatorProcess,
} from '../support/operator.js';
import { prepareClusters } from '../support/prepare.js';
import { dig, startDnsServer, type DnsProcess } from '../support/dns.js';
import { stopChild } from '../support/stop-child.js';
import { TestEnv, startCluster, stopCluster } from '../support/testenv.js';

const ZONE = 'apps.corp.internal';
const WWW = `www.shop.${ZONE}`;
const PAY = `www.pay.${ZONE}`;
const TEAM = 'shop';
/** Every cluster's management namespace: cluster-c is the payments team's. */
const NAMESPACE: Record<string, string> = { 'cluster-a': TEAM, 'cluster-b': TEAM, 'cluster-c': 'pay' };
const CLUSTERS = ['cluster-a', 'cluster-b', 'cluster-c'] as const;
const SHOP = ['cluster-a', 'cluster-b'] as const;
/** Each cluster's exposed dns-server: a loopback address, port 53 (glue carries no port). */
const SERVER: Record<string, string> = {
  'cluster-a': '127.0.43.1',
  'cluster-b': '127.0.43.2',
  'cluster-c': '127.0.43.3',
};
/** Each cluster's address of its team's web (localFirst: each cluster's server answers its own). */
const WEB: Record<string, string> = {
  'cluster-a': '203.0.113.1',
  'cluster-b': '203.0.113.2',
  'cluster-c': '203.0.113.3',
};
const ZONES = { group: 'connectivity.tanzu.vmware.com', version: 'v1alpha1', plural: 'dnszones' };
const nsName = (cluster: string) => `${cluster}.${NAMESPACE[cluster]}.ns.${ZONE}`;

describe('DNSZone spec.nameservers.expose: the exposed dns-servers are the NS, with glue', () => {
  let env: TestEnv;
  let op: OperatorProcess | undefined;
  const servers: Record<string, DnsProcess> = {};
  let unbound: { child: ChildProcess; dir: string } | undefined;
  /** What was measured, printed at the end: ms from the change to the NS set without the cluster. */
  const measured: Record<string, number> = {};

  const kc = (name: string): KubeConfig => env.kubeConfig(name);
  const readZone = async (): Promise<DNSZone | undefined> => {
    try {
      return (await kc('management')
        .makeApiClient(CustomObjectsApi)
        .getClusterCustomObject({ ...ZONES, name: 'apps-corp-internal' })) as DNSZone;
    } catch (err) {
      if (statusCode(err) === 404) return undefined;
      throw err;
    }
  };
  /** The NS set a dns-server serves at the apex, sorted. */
  const nsAt = async (cluster: string) =>
    (await dig(53, ['+short', ZONE, 'NS'], SERVER[cluster]!)).stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .sort();
  /** Until the status and both (reachable) dns-servers show exactly these clusters' exposed servers. */
  const nameserversAre = (clusters: string[], askServers: string[] = [...CLUSTERS], timeoutMs = 15_000) =>
    eventually(
      async () => {
        const want = clusters.map((c) => `${nsName(c)}.`).sort();
        const zone = await readZone();
        const inStatus = (zone?.status?.nameservers ?? []).map((n) => `${n.name}.`).sort();
        if (JSON.stringify(inStatus) !== JSON.stringify(want))
          throw new Error(`status.nameservers ${inStatus.join(' ')}, want ${want.join(' ')}`);
        for (const s of askServers) {
          const served = await nsAt(s);
          if (JSON.stringify(served) !== JSON.stringify(want))
            throw new Error(`${s}'s dns-server serves NS ${served.join(' ')}, want ${want.join(' ')}`);
        }
        return zone!;
      },
      timeoutMs,
      20,
    );
  const exposeService = async (cluster: string, ingress: { ip: string }[]) => {
    const core = kc(cluster).makeApiClient(CoreV1Api);
    try {
      await core.createNamespacedService({
        namespace: 'capi-dns',
        body: {
          metadata: { name: EXPOSED_DNS_SERVICE },
          spec: {
            type: 'LoadBalancer',
            externalTrafficPolicy: 'Local',
            selector: { 'app.kubernetes.io/name': 'capi-dns-server' },
            ports: [
              { name: 'dns-udp', port: 53, protocol: 'UDP' },
              { name: 'dns-tcp', port: 53, protocol: 'TCP' },
            ],
          },
        },
      });
    } catch (err) {
      if (statusCode(err) !== 409) throw err;
    }
    await core.patchNamespacedServiceStatus(
      { name: EXPOSED_DNS_SERVICE, namespace: 'capi-dns', body: { status: { loadBalancer: { ingress } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  };
  const deleteService = (cluster: string) =>
    kc(cluster)
      .makeApiClient(CoreV1Api)
      .deleteNamespacedService({ name: EXPOSED_DNS_SERVICE, namespace: 'capi-dns' });

  beforeAll(async () => {
    env = await TestEnv.start({ workloadClusters: [...CLUSTERS] });
    await prepareClusters(env, { namespace: TEAM, workloads: [...SHOP], recordsNamespace: 'capi-dns' });
    await prepareClusters(env, { namespace: 'pay', workloads: ['cluster-c'], recordsNamespace: 'capi-dns' });
    for (const c of CLUSTERS) {
      await setLoadBalancer(kc(c), NAMESPACE[c]!, 'web', [{ ip: WEB[c]! }]);
      servers[c] = await startDnsServer([
        '--listen',
        `${SERVER[c]}:53`,
        '--zone',
        'xcc.test',
        '--kubeconfig',
        env.cluster(c).kubeconfig,
        // Each replica reports the serial it serves (status.nameservers[].serial).
        '--pod-name',
        `capi-dns-server-${c}`,
      ]);
      await exposeService(c, [{ ip: SERVER[c]! }]);
    }
    op = await startOperator(env.cluster('management').kubeconfig, ['--no-leader-elect']);
  }, 180_000);

  afterAll(async () => {
    if (unbound) {
      await stopChild(unbound.child, 5_000);
      rmSync(unbound.dir, { recursive: true, force: true });
    }
    for (const team of [TEAM, 'pay'])
      await deleteGatewayDns(kc('management'), team, 'web').catch(() => undefined);
    await op?.stop();
    for (const s of Object.values(servers)) await s.stop();
    await env?.stop();
    if (Object.keys(measured).length)
      process.stderr.write(
        `operator-expose: ms until a gone exposed dns-server left the NS set, and until a new serial reached status.nameservers (serialInStatus): ${JSON.stringify(measured)}\n`,
      );
  }, 60_000);

  it('puts every exposed dns-server in the NS set, with glue, in status (ready to paste) and in what all serve', async () => {
    const web = (team: string, name: string) =>
      ({
        apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
        kind: 'GatewayDNS',
        metadata: { name: 'web', namespace: team },
        spec: { clusterSelector: {}, service: `${team}/web`, hostnames: [name], answer: 'localFirst' },
      }) as KubernetesObject;
    await apply(kc('management'), [
      web(TEAM, WWW),
      web('pay', PAY),
      {
        apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
        kind: 'DNSZone',
        metadata: { name: 'apps-corp-internal' },
        spec: {
          zone: ZONE,
          nameservers: { expose: true },
          delegations: [
            { namespaces: [TEAM], hostnames: [`*.shop.${ZONE}`] },
            { namespaces: ['pay'], hostnames: [`*.pay.${ZONE}`] },
          ],
        },
      } as KubernetesObject,
    ]);
    const zone = await nameserversAre([...CLUSTERS]);
    // (The serial each serves joins when its report is read: the next test.)
    expect(zone.status?.nameservers).toMatchObject([
      { cluster: 'shop/cluster-a', name: nsName('cluster-a'), addresses: [SERVER['cluster-a']] },
      { cluster: 'shop/cluster-b', name: nsName('cluster-b'), addresses: [SERVER['cluster-b']] },
      { cluster: 'pay/cluster-c', name: nsName('cluster-c'), addresses: [SERVER['cluster-c']] },
    ]);
    expect(zone.status?.parentRecords).toEqual([
      `${ZONE}. IN NS ${nsName('cluster-a')}.`,
      `${ZONE}. IN NS ${nsName('cluster-b')}.`,
      `${ZONE}. IN NS ${nsName('cluster-c')}.`,
      `${nsName('cluster-a')}. IN A ${SERVER['cluster-a']}`,
      `${nsName('cluster-b')}. IN A ${SERVER['cluster-b']}`,
      `${nsName('cluster-c')}. IN A ${SERVER['cluster-c']}`,
    ]);
    // Each namespace's part: a zone cut to its own clusters' exposed servers.
    expect(zone.status?.zoneCuts).toEqual([
      { name: `pay.${ZONE}`, nameServers: [nsName('cluster-c')] },
      { name: `shop.${ZONE}`, nameServers: [nsName('cluster-a'), nsName('cluster-b')] },
    ]);
    expect(zone.status?.conditions?.find((c) => c.type === 'NameserversExposed')).toMatchObject({
      status: 'True',
      reason: 'Exposed',
    });
    // The glue, from either server: a resolver that knows one finds the other.
    for (const s of CLUSTERS)
      for (const c of CLUSTERS) {
        const a = await dig(53, ['+norecurse', nsName(c), 'A'], SERVER[s]!);
        expect(a.flags).toContain('aa');
        expect(a.answer).toEqual([
          expect.stringMatching(new RegExp(` IN A ${SERVER[c]!.replace(/\./g, '\\.')}$`)),
        ]);
      }
  });

  it("status.nameservers shows the serial each cluster's dns-server serves, and it moves after a change", async () => {
    const soaSerial = async (cluster: string) =>
      Number((await dig(53, ['+short', ZONE, 'SOA'], SERVER[cluster]!)).stdout.trim().split(/\s+/)[2]);
    /** Until every cluster's status.nameservers[].serial is the SOA serial its dns-server serves. */
    const serialsServed = () =>
      eventually(
        async () => {
          const shown = new Map(
            ((await readZone())?.status?.nameservers ?? []).map((n) => [n.cluster, n.serial]),
          );
          const served: Record<string, number> = {};
          for (const c of CLUSTERS) {
            served[c] = await soaSerial(c);
            const inStatus = shown.get(`${NAMESPACE[c]}/${c}`);
            if (inStatus !== served[c])
              throw new Error(`${c}: status.nameservers serial ${inStatus}, serves ${served[c]}`);
          }
          return served;
        },
        15_000,
        50,
      );
    const before = await serialsServed();
    for (const c of CLUSTERS) expect(before[c]).toBeGreaterThan(1_700_000_000); // Unix time (ADR 0216)
    // A change in cluster-a's records: its dns-server builds anew at a later serial, and says so.
    const t0 = Date.now();
    await apply(kc('cluster-a'), [
      {
        apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
        kind: 'DNSRecordSet',
        metadata: { name: 'serial-check', namespace: 'capi-dns' },
        spec: { records: [{ name: `serial-check.${ZONE}`, type: 'TXT', values: ['moved'] }] },
      } as KubernetesObject,
    ]);
    const after = await eventually(async () => {
      const served = await serialsServed();
      if (served['cluster-a']! <= before['cluster-a']!)
        throw new Error(`cluster-a still serves ${served['cluster-a']}`);
      return served;
    }, 15_000);
    measured.serialInStatus = Date.now() - t0;
    expect(after['cluster-a']).toBeGreaterThan(before['cluster-a']!);
  });

  it("a namespace's names: answered by its own clusters, a referral (no AA) to them from the others", async () => {
    const referral = async (server: string, name: string, to: string[]) => {
      const r = await dig(53, ['+norecurse', name, 'A'], SERVER[server]!);
      expect(r.status).toBe('NOERROR');
      expect(r.flags).not.toContain('aa');
      expect(r.answer).toEqual([]);
      const part = name.split('.').slice(1).join('.');
      expect(r.authority.sort()).toEqual(to.map((c) => `${part}. 30 IN NS ${nsName(c)}.`));
    };
    await eventually(() => referral('cluster-c', WWW, [...SHOP]), 15_000);
    await referral('cluster-a', PAY, ['cluster-c']);
    await referral('cluster-b', PAY, ['cluster-c']);
    const own = await dig(53, ['+norecurse', PAY, 'A'], SERVER['cluster-c']!);
    expect(own.flags).toContain('aa');
    expect(own.answer).toEqual([`${PAY}. 30 IN A ${WEB['cluster-c']}`]);
  });

  it('each exposed server answers from its own view (localFirst: its own cluster), with no recursion offered', async () => {
    for (const c of SHOP)
      await eventually(async () => {
        const r = await dig(53, ['+recurse', WWW, 'A'], SERVER[c]!);
        if (r.answer.length !== 1 || !r.answer[0]!.endsWith(` A ${WEB[c]}`))
          throw new Error(`${c}'s server answers ${r.answer.join(' | ')}, want ${WEB[c]}`);
        // RFC 1035 4.1.1: RD is copied, RA never set; the answer is authoritative.
        expect(r.flags).toEqual(expect.arrayContaining(['qr', 'aa', 'rd']));
        expect(r.flags).not.toContain('ra');
      }, 15_000);
    // EDNS: whatever the client offers, 1232 at most (DNS Flag Day 2020); TC then TCP for more.
    const edns = await dig(53, ['+norecurse', '+bufsize=4096', WWW, 'A'], SERVER['cluster-a']!);
    expect(edns.stdout).toMatch(/; EDNS: version: 0, flags:; udp: 1232/);
    const tcp = await dig(53, ['+norecurse', '+tcp', WWW, 'A'], SERVER['cluster-a']!);
    expect(tcp.answer).toEqual([`${WWW}. 30 IN A ${WEB['cluster-a']}`]);
    // A name outside every zone it serves: refused, not resolved (RD ignored).
    const outside = await dig(53, ['+recurse', 'example.com', 'A'], SERVER['cluster-a']!);
    expect(outside.status).toBe('REFUSED');
    expect(outside.flags).not.toContain('ra');
  });

  it('a cluster whose exposed Service is deleted leaves the NS set within seconds, and comes back with it', async () => {
    const t0 = Date.now();
    await deleteService('cluster-b');
    await nameserversAre(['cluster-a', 'cluster-c'], [...CLUSTERS], 10_000);
    measured.serviceDeleted = Date.now() - t0;
    expect(measured.serviceDeleted).toBeLessThan(5_000);
    await exposeService('cluster-b', [{ ip: SERVER['cluster-b']! }]);
    await nameserversAre([...CLUSTERS]);
  });

  it('… and one whose Service loses its load-balancer address', async () => {
    const t0 = Date.now();
    await exposeService('cluster-a', []);
    await nameserversAre(['cluster-b', 'cluster-c'], [...CLUSTERS], 10_000);
    measured.ingressRemoved = Date.now() - t0;
    expect(measured.ingressRemoved).toBeLessThan(5_000);
    const zone = await readZone();
    expect(zone?.status?.parentRecords).not.toContain(`${ZONE}. IN NS ${nsName('cluster-a')}.`);
    await exposeService('cluster-a', [{ ip: SERVER['cluster-a']! }]);
    await nameserversAre([...CLUSTERS]);
  });

  it('… and one whose API server stops answering (cluster unreachable)', async () => {
    const t0 = Date.now();
    await stopCluster(env.info, 'cluster-b');
    try {
      // cluster-b's dns-server keeps serving what it had; cluster-a's, and the status, drop it.
      await nameserversAre(['cluster-a', 'cluster-c'], ['cluster-a', 'cluster-c'], 15_000);
      measured.clusterUnreachable = Date.now() - t0;
      expect(measured.clusterUnreachable).toBeLessThan(10_000);
    } finally {
      await startCluster(env.info, 'cluster-b');
    }
    await nameserversAre([...CLUSTERS], [...CLUSTERS], 30_000);
  });

  it('with no exposed dns-server left, the NS set falls back and the condition says why', async () => {
    for (const c of CLUSTERS) await deleteService(c);
    const zone = await eventually(async () => {
      const z = await readZone();
      const c = z?.status?.conditions?.find((x) => x.type === 'NameserversExposed');
      if (c?.reason !== 'NoExposedServer') throw new Error(`NameserversExposed ${c?.reason}`);
      return z!;
    });
    expect(zone.status?.nameservers).toEqual([]);
    for (const c of CLUSTERS) await exposeService(c, [{ ip: SERVER[c]! }]);
    await nameserversAre([...CLUSTERS]);
  });

  it("an unbound outside every cluster follows the delegation to the exposed servers and gets every namespace's names", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-unbound-'));
    const port = 5343;
    // The parent's part (a company's corp.internal) is a stub pointing at the NS and glue of
    // status.parentRecords; unbound then learns the zone's own NS set from the servers and uses it.
    writeFileSync(
      path.join(dir, 'unbound.conf'),
      [
        'server:',
        `  interface: 127.0.43.53@${port}`,
        '  do-not-query-localhost: no',
        '  username: ""',
        `  directory: "${dir}"`,
        '  chroot: ""',
        '  pidfile: ""',
        '  use-syslog: no',
        '  logfile: ""',
        '  verbosity: 1',
        '  domain-insecure: "corp.internal"',
        '  local-zone: "corp.internal." nodefault',
        'stub-zone:',
        `  name: "${ZONE}"`,
        ...CLUSTERS.map((c) => `  stub-host: "${nsName(c)}"`),
        ...CLUSTERS.map((c) => `  stub-addr: ${SERVER[c]}`),
        '  stub-prime: yes',
        '',
      ].join('\n'),
    );
    const child = spawn('unbound', ['-d', '-c', path.join(dir, 'unbound.conf')], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    unbound = { child, dir };
    const resolve = (name: string) =>
      eventually(async () => {
        const res = await dig(port, [name, 'A'], '127.0.43.53');
        if (res.status !== 'NOERROR' || !res.answer.length)
          throw new Error(`unbound: ${res.status} ${res.answer.join(' ')}`);
        return res;
      }, 15_000);
    const shop = await resolve(WWW);
    expect(shop.flags).toContain('ra');
    expect([WEB['cluster-a'], WEB['cluster-b']]).toContain(shop.answer[0]!.split(' ').pop());
    // Through the referral of whichever apex server unbound asked.
    expect((await resolve(PAY)).answer).toEqual([`${PAY}. 30 IN A ${WEB['cluster-c']}`]);
  });

  it('a dns-server run without --pod-uid deletes its served-serials report when it stops (no Pod owns it)', async () => {
    const core = kc('cluster-c').makeApiClient(CoreV1Api);
    const report = { name: servedSerialsName('capi-dns-server-cluster-c'), namespace: 'capi-dns' };
    expect((await core.readNamespacedConfigMap(report)).metadata?.ownerReferences).toBeUndefined();
    await servers['cluster-c']!.stop();
    delete servers['cluster-c'];
    await expect(core.readNamespacedConfigMap(report)).rejects.toMatchObject({ code: 404 });
  });
});
