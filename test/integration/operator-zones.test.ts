// DNSZone (issue 42, ADR 0213) on real API servers, on an environment of its
// own: the operator watches every namespace (teams are namespaces). One
// workload cluster, registered in two team namespaces, runs the record sets
// of both, and a dns-server started with --zone xcc.test only. The story is an
// upgrade: a flags-only installation where a squatter (team-b) claimed
// pay.apps.corp.internal before its owner (pay); the operator is restarted
// (the new version), a DNSZone comes in Audit (the dns-server is told the
// zone), then Enforce; the name moves to its owner; an fqdn annotation and a
// route host name outside the delegation are refused; a delegation is
// changed, then removed; bad input, equal patterns to two namespaces and a
// second DNSZone for the zone change nothing served; deleting the DNSZone
// hands the zone back to the flags (and the dns-server stops serving it).
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
} from '@kubernetes/client-node';
import type { DNSZone } from '../../api/index.js';
import { ensureNamespace, registerWorkloadCluster, waitForClusterProvisioned } from '../support/capi.js';
import { apply, eventually, statusCode } from '../support/kube.js';
import {
  deleteGatewayDns,
  metricsOf,
  readGatewayDns,
  readRecordSet,
  recordLines,
  setLoadBalancer,
  startOperator,
  type OperatorProcess,
} from '../support/operator.js';
import { prepareClusters } from '../support/prepare.js';
import {
  ensureGatewayClass,
  setGatewayStatus,
  setRouteParents,
  writeGateway,
  writeRoute,
} from '../support/gateway-api.js';
import { dig, shortAnswer, startDnsServer, type DnsProcess } from '../support/dns.js';
import { TestEnv } from '../support/testenv.js';

const ZONE = 'apps.corp.internal';
const PAY = `pay.${ZONE}`;
const API = `api.${ZONE}`;
const TEAMS = ['team-b', 'pay'] as const;
const ZONES = { group: 'connectivity.tanzu.vmware.com', version: 'v1alpha1', plural: 'dnszones' };
const ADDRESS: Record<string, string> = { 'team-b': '203.0.113.66', pay: '203.0.113.10' };

function gatewayDns(namespace: string, name: string, spec: Record<string, unknown>): KubernetesObject {
  return {
    apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
    kind: 'GatewayDNS',
    metadata: { name, namespace },
    spec: { clusterSelector: {}, ...spec },
  } as KubernetesObject;
}

function dnsZone(spec: Record<string, unknown>): KubernetesObject {
  return {
    apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
    kind: 'DNSZone',
    metadata: { name: 'apps-corp-internal' },
    spec,
  } as KubernetesObject;
}

describe('DNSZone: names delegated to namespaces', () => {
  let env: TestEnv;
  let op: OperatorProcess | undefined;
  /** cluster-a's dns-server, started with --zone xcc.test only: apps.corp.internal comes from the DNSZone. */
  let dns: DnsProcess | undefined;

  const management = () => env.kubeConfig('management');
  const clusterA = () => env.kubeConfig('cluster-a');
  const start = async () => {
    op = await startOperator(env.cluster('management').kubeconfig, ['--no-leader-elect', '--zone', ZONE]);
  };
  const readZone = async (): Promise<DNSZone | undefined> => {
    try {
      return (await management()
        .makeApiClient(CustomObjectsApi)
        .getClusterCustomObject({ ...ZONES, name: 'apps-corp-internal' })) as DNSZone;
    } catch (err) {
      if (statusCode(err) === 404) return undefined;
      throw err;
    }
  };
  /** The records of a team's GatewayDNS "web" in the workload cluster, as "name TYPE values". */
  const served = async (team: string) => recordLines(await readRecordSet(clusterA(), `${team}.web`));
  const serves = (team: string, name: string) =>
    eventually(async () => {
      const lines = await served(team);
      if (!lines.includes(`${name} A ${ADDRESS[team]}`))
        throw new Error(`${team}/web does not serve ${name}: ${lines.join(' | ')}`);
    }, 10_000);
  const servesNot = (team: string, name: string) =>
    eventually(async () => {
      const lines = await served(team);
      if (lines.some((l) => l.startsWith(`${name} `)))
        throw new Error(`${team}/web still serves ${name}: ${lines.join(' | ')}`);
    }, 10_000);
  const condition = (team: string, type: string, reason: string, message = '') =>
    eventually(async () => {
      const gw = await readGatewayDns(management(), team, 'web');
      const c = gw?.status?.conditions?.find((x) => x.type === type);
      if (c?.reason !== reason || !c.message.includes(message))
        throw new Error(
          `${team}/web ${type}: ${c?.status}/${c?.reason} (${c?.message}), want ${reason} with "${message}"`,
        );
      return c;
    }, 10_000);
  const zoneStatus = (check: (z: DNSZone) => string | undefined) =>
    eventually(async () => {
      const z = await readZone();
      const problem = z ? check(z) : 'no DNSZone';
      if (problem) throw new Error(`${problem}: ${JSON.stringify(z?.status)}`);
      return z!;
    }, 10_000);

  beforeAll(async () => {
    env = await TestEnv.start({ workloadClusters: ['cluster-a'] });
    await prepareClusters(env, {
      namespace: 'team-b',
      workloads: ['cluster-a'],
      recordsNamespace: 'capi-dns',
      gatewayApi: 'standard',
    });
    for (const team of TEAMS.slice(1)) {
      await ensureNamespace(management(), team);
      await registerWorkloadCluster(management(), {
        namespace: team,
        cluster: 'cluster-a',
        kubeconfigPath: env.cluster('cluster-a').kubeconfig,
      });
      await waitForClusterProvisioned(management(), team, 'cluster-a');
    }
    // The payments team's namespace is labelled so: the DNSZone delegates by selector.
    await management()
      .makeApiClient(CoreV1Api)
      .patchNamespace(
        { name: 'pay', body: { metadata: { labels: { payments: 'true' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    for (const team of TEAMS) await setLoadBalancer(clusterA(), team, 'web', [{ ip: ADDRESS[team]! }]);
    dns = await startDnsServer(['--zone', 'xcc.test', '--kubeconfig', env.cluster('cluster-a').kubeconfig]);
  }, 120_000);

  afterAll(async () => {
    for (const team of TEAMS)
      await deleteGatewayDns(management(), team, 'web').catch((err: unknown) => {
        if (statusCode(err) !== 404) throw err;
      });
    await op?.stop();
    await dns?.stop();
    await env?.stop();
  }, 60_000);

  it('flags only: the squatter, first, keeps the name, and both say the zone has no DNSZone', async () => {
    await start();
    await apply(management(), [gatewayDns('team-b', 'web', { service: 'team-b/web', hostnames: [PAY] })]);
    await serves('team-b', PAY);
    // Created later: the owner is refused by the first-claim rule.
    await new Promise((r) => setTimeout(r, 1100));
    await apply(management(), [gatewayDns('pay', 'web', { service: 'pay/web', hostnames: [PAY] })]);
    await condition('pay', 'HostnamesAccepted', 'Conflict', 'claimed by the older gatewaydns team-b/web');
    await condition('team-b', 'NamesDelegated', 'FirstClaim', `zone ${ZONE} has no DNSZone`);
  });

  it('an upgrade then adds a DNSZone in Audit: nothing served changes, status and metric list what Enforce would withdraw', async () => {
    // The new version of the operator, started over the flags-only installation.
    await op?.stop();
    await start();
    await apply(management(), [
      dnsZone({
        zone: ZONE,
        enforcement: 'Audit',
        soa: { mname: 'ns1.corp.example', rname: 'dns.corp.example' },
        delegations: [
          { namespaces: ['shop'], hostnames: [`shop.${ZONE}`, `*.shop.${ZONE}`] },
          { namespaceSelector: { matchLabels: { payments: 'true' } }, hostnames: [PAY, `*.${PAY}`] },
        ],
      }),
    ]);
    const zone = await zoneStatus((z) =>
      z.status?.audit?.some((a) => a.hostname === PAY && a.gatewayDNS === 'team-b/web')
        ? undefined
        : 'no audit entry for team-b/web',
    );
    expect(zone.status?.audit?.[0]?.message).toContain(
      `zone ${ZONE} delegates it to no namespace matching team-b`,
    );
    expect(zone.metadata.finalizers).toContain('connectivity.tanzu.vmware.com/dnszone');
    expect(zone.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    await condition('team-b', 'NamesDelegated', 'Audit', 'enforcement would withdraw');
    expect(await served('team-b')).toContain(`${PAY} A ${ADDRESS['team-b']}`);
    // Declared once: cluster-a's dns-server, told by the operator, serves the zone, with the SOA asked for.
    expect(zone.status?.clusters).toEqual([
      { cluster: 'pay/cluster-a', served: true },
      { cluster: 'team-b/cluster-a', served: true },
    ]);
    await eventually(async () => {
      const soa = await shortAnswer(dns!.port, ZONE, 'SOA');
      if (!soa[0]?.startsWith('ns1.corp.example. dns.corp.example.')) throw new Error(`SOA ${soa.join(' ')}`);
      const a = await shortAnswer(dns!.port, PAY);
      if (a.join() !== ADDRESS['team-b']) throw new Error(`${PAY}: ${a.join(' ')}`);
    }, 10_000);
    const metrics = await metricsOf(op!);
    expect(
      metrics['capi_dns_zone_audit_withdrawals{dnszone="apps-corp-internal",zone="apps.corp.internal"}'],
    ).toBe(1);
  });

  it('Enforce: the name goes to its owner; the refusal names what is missing', async () => {
    await apply(management(), [
      dnsZone({
        zone: ZONE,
        enforcement: 'Enforce',
        delegations: [
          { namespaces: ['shop'], hostnames: [`shop.${ZONE}`, `*.shop.${ZONE}`] },
          { namespaceSelector: { matchLabels: { payments: 'true' } }, hostnames: [PAY, `*.${PAY}`] },
        ],
      }),
    ]);
    await serves('pay', PAY);
    await servesNot('team-b', PAY);
    await condition(
      'team-b',
      'HostnamesAccepted',
      'NotDelegated',
      `not served: ${PAY} (zone ${ZONE} delegates it to no namespace matching team-b`,
    );
    await condition('pay', 'NamesDelegated', 'Delegated');
    await zoneStatus((z) =>
      z.status?.holders?.map((h) => `${h.namespace}: ${h.hostnames.join(',')}`).join('; ') ===
        `pay: ${PAY}` && !z.status?.audit?.length
        ? undefined
        : 'holders not pay only',
    );
  });

  it('an fqdn annotation outside the delegation is refused', async () => {
    await clusterA()
      .makeApiClient(CoreV1Api)
      .patchNamespacedService(
        {
          name: 'web',
          namespace: 'team-b',
          body: { metadata: { annotations: { 'connectivity.tanzu.vmware.com/fqdn': API } } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    await condition(
      'team-b',
      'HostnamesAccepted',
      'NotDelegated',
      `${API} (zone ${ZONE} delegates it to no namespace matching team-b; asked for through the fqdn annotation on Service team-b/web in cluster cluster-a)`,
    );
    await servesNot('team-b', API);
  });

  it('a route host name outside the delegation is refused, naming the route it came from', async () => {
    const kc = clusterA();
    await ensureGatewayClass(kc);
    await writeGateway(kc, 'team-b', 'edge', [{ name: 'http', port: 80, protocol: 'HTTP' }]);
    await setGatewayStatus(kc, 'team-b', 'edge', { programmed: true, addresses: ['203.0.113.67'] });
    await writeRoute(kc, 'HTTPRoute', 'team-b', 'checkout', {
      hostnames: [`checkout.${PAY}`],
      parentRefs: [{ namespace: 'team-b', name: 'edge' }],
    });
    await setRouteParents(kc, 'HTTPRoute', 'team-b', 'checkout', [
      { parentRef: { namespace: 'team-b', name: 'edge' }, accepted: true },
    ]);
    await apply(management(), [
      {
        apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
        kind: 'GatewayDNS',
        metadata: { name: 'edge', namespace: 'team-b' },
        spec: { clusterSelector: {}, gatewayRef: { namespace: 'team-b', name: 'edge' } },
      } as KubernetesObject,
    ]);
    const c = await eventually(async () => {
      const gw = await readGatewayDns(management(), 'team-b', 'edge');
      const h = gw?.status?.conditions?.find((x) => x.type === 'HostnamesAccepted');
      if (h?.reason !== 'NotDelegated')
        throw new Error(`team-b/edge HostnamesAccepted: ${h?.reason} (${h?.message})`);
      return h;
    }, 15_000);
    expect(c.message).toContain(
      `not served: checkout.${PAY} (zone ${ZONE} delegates it to no namespace matching team-b`,
    );
    expect(c.message).toContain('asked for through HTTPRoute team-b/checkout in cluster cluster-a');
    expect(recordLines(await readRecordSet(clusterA(), 'team-b.edge')).join()).not.toContain(
      `checkout.${PAY}`,
    );
    await deleteGatewayDns(management(), 'team-b', 'edge');
  });

  it('a delegation changed moves the name; removed, nobody serves it', async () => {
    await apply(management(), [
      dnsZone({
        zone: ZONE,
        delegations: [{ namespaces: ['team-b'], hostnames: [PAY, API] }],
      }),
    ]);
    await serves('team-b', PAY);
    await serves('team-b', API);
    await servesNot('pay', PAY);
    await condition('pay', 'HostnamesAccepted', 'NotDelegated', 'delegated to namespaces team-b');
    await apply(management(), [dnsZone({ zone: ZONE, delegations: [] })]);
    await servesNot('team-b', PAY);
    await servesNot('pay', PAY);
  });

  it('bad input is refused in status and changes nothing served', async () => {
    await apply(management(), [
      dnsZone({ zone: ZONE, delegations: [{ namespaces: ['pay'], hostnames: [PAY] }] }),
    ]);
    await serves('pay', PAY);
    for (const [spec, message] of [
      [{ zone: 'apps corp!', delegations: [] }, 'spec.zone "apps corp!" is not a DNS name'],
      [
        { zone: ZONE, delegations: [{ namespaces: ['team-b'], hostnames: ['pay.example.com'] }] },
        'outside the zone',
      ],
    ] as const) {
      await apply(management(), [dnsZone(spec)]);
      const z = await zoneStatus((x) =>
        x.status?.conditions?.find((c) => c.type === 'Ready')?.reason === 'Invalid' &&
        x.status.observedGeneration === x.metadata.generation
          ? undefined
          : 'not Invalid yet',
      );
      expect(z.status?.conditions?.find((c) => c.type === 'Ready')?.message).toContain(message);
      expect(z.status?.enforced?.delegations).toEqual([{ namespaces: ['pay'], hostnames: [PAY] }]);
      await new Promise((r) => setTimeout(r, 300));
      expect(await served('pay')).toContain(`${PAY} A ${ADDRESS.pay}`);
    }
  });

  it('equal patterns to two namespaces: the one already serving keeps them, the other is named', async () => {
    // team-b first in the list, but pay serves the name now.
    await apply(management(), [
      dnsZone({
        zone: ZONE,
        delegations: [
          { namespaces: ['team-b'], hostnames: [PAY] },
          { namespaces: ['pay'], hostnames: [PAY] },
        ],
      }),
    ]);
    const z = await zoneStatus((x) =>
      x.status?.conditions?.find((c) => c.type === 'DelegationsAccepted')?.reason === 'Overlapping' &&
      x.status.observedGeneration === x.metadata.generation
        ? undefined
        : 'not Overlapping yet',
    );
    expect(z.status?.conditions?.find((c) => c.type === 'DelegationsAccepted')?.message).toContain(
      `delegations[0]: ${PAY} is delegated by delegations[1] too (namespaces pay), which keeps it as it serves names there`,
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(await served('pay')).toContain(`${PAY} A ${ADDRESS.pay}`);
    await servesNot('team-b', PAY);
  });

  it('a second DNSZone for the same zone is refused; the older governs', async () => {
    await apply(management(), [
      {
        apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
        kind: 'DNSZone',
        metadata: { name: 'apps-again' },
        spec: { zone: ZONE, delegations: [{ namespaces: ['team-b'], hostnames: [PAY] }] },
      } as KubernetesObject,
    ]);
    const custom = management().makeApiClient(CustomObjectsApi);
    const again = await eventually(async () => {
      const z = (await custom.getClusterCustomObject({ ...ZONES, name: 'apps-again' })) as DNSZone;
      const ready = z.status?.conditions?.find((c) => c.type === 'Ready');
      if (ready?.reason !== 'DuplicateZone') throw new Error(`apps-again Ready: ${ready?.reason}`);
      return z;
    }, 10_000);
    expect(again.status?.enforced).toBeUndefined();
    expect(again.status?.conditions?.find((c) => c.type === 'Ready')?.message).toContain(
      `DNSZone apps-corp-internal declares the zone ${ZONE} and is older`,
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(await served('pay')).toContain(`${PAY} A ${ADDRESS.pay}`);
    await custom.deleteClusterCustomObject({ ...ZONES, name: 'apps-again' });
    await eventually(async () => {
      try {
        await custom.getClusterCustomObject({ ...ZONES, name: 'apps-again' });
      } catch (err) {
        if (statusCode(err) === 404) return;
        throw err;
      }
      throw new Error('apps-again still there');
    }, 15_000);
  });

  it('deleting the DNSZone hands the zone back to the flags: first claim again', async () => {
    await management()
      .makeApiClient(CustomObjectsApi)
      .deleteClusterCustomObject({ ...ZONES, name: 'apps-corp-internal' });
    await eventually(async () => {
      if (await readZone()) throw new Error('DNSZone still there');
    }, 15_000);
    await serves('team-b', PAY);
    await condition('team-b', 'NamesDelegated', 'FirstClaim');
    // The dns-server was never given the zone by a flag: with the DNSZone gone, it serves it no more.
    await eventually(async () => {
      const res = await dig(dns!.port, [ZONE, 'SOA']);
      if (res.status !== 'REFUSED')
        throw new Error(
          `${ZONE} SOA: ${res.status}; dns-server log:\n${dns!.logs().split('\n').slice(-8).join('\n')}`,
        );
    }, 10_000);
  });
});
