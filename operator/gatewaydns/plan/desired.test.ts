import type { DNSRecordSet } from '../../../api/index.js';
import { recordsFor, shardsFor, shardViews, type DesiredInput } from './desired.js';
import type { ClusterFacts } from '../../model/facts.js';
import { validateGatewayDnsSpec, type EffectiveSpec } from '../../model/validate.js';
import { planRecordSets } from './plan.js';

/** The record sets the product's plan gives one receiving cluster for this input. */
function plannedSets(i: DesiredInput, recordsNamespace: string): DNSRecordSet[] {
  const plan = planRecordSets({
    namespace: i.namespace,
    name: i.name,
    spec: i.spec,
    domainSuffix: i.suffix,
    recordsNamespace,
    facts: i.facts,
    conflict: { lostDomains: i.excludedDomains ?? [], with: [] },
    hostnames: { served: i.hostnames ?? [], refused: [] },
    receivingClusters: ['receiver'],
    clusterLabels: i.clusterLabels,
  });
  return (plan.setsByCluster.get('receiver') ?? []).map((d) => d.set);
}

function spec(over: Partial<EffectiveSpec> = {}): EffectiveSpec {
  const v = validateGatewayDnsSpec({ clusterSelector: {}, service: 'projectcontour/envoy' });
  if (!v.valid) throw new Error(v.message);
  return { ...v.spec, ...over };
}

function facts(cluster: string, addresses: string[], over: Partial<ClusterFacts> = {}): ClusterFacts {
  return { cluster, state: addresses.length ? 'Ready' : 'NoAddresses', addresses, ports: [], ...over };
}

function input(over: Partial<DesiredInput>): DesiredInput {
  return { namespace: 'dev-team', name: 'gw', spec: spec(), suffix: 'xcc.test', facts: [], ...over };
}

describe('recordsFor', () => {
  it('gives the walkthrough its per-cluster and cluster-independent names', () => {
    const records = recordsFor(input({ facts: [facts('cluster-a', ['10.0.0.5']), facts('cluster-b', [])] }));
    expect(records).toEqual([
      { name: '*.gateway.cluster-a.dev-team.clusters.xcc.test', type: 'A', ttl: 30, values: ['10.0.0.5'] },
      { name: '*.gateway.dev-team.clusters.xcc.test', type: 'A', ttl: 30, values: ['10.0.0.5'] },
    ]);
  });

  it('splits IPv4 and IPv6 into A and AAAA, and merges every cluster under the namespace name', () => {
    const records = recordsFor(
      input({ facts: [facts('a', ['10.0.0.1', 'fd00::1']), facts('b', ['10.0.0.2', '10.0.0.1'])] }),
    );
    const ns = records.filter((r) => r.name === '*.gateway.dev-team.clusters.xcc.test');
    expect(ns).toEqual([
      { name: '*.gateway.dev-team.clusters.xcc.test', type: 'A', ttl: 30, values: ['10.0.0.1', '10.0.0.2'] },
      { name: '*.gateway.dev-team.clusters.xcc.test', type: 'AAAA', ttl: 30, values: ['fd00::1'] },
    ]);
  });

  it('gives a CNAME for a load balancer host name, and drops host names when IPs exist', () => {
    const records = recordsFor(input({ facts: [facts('a', ['lb.example.com']), facts('b', ['10.0.0.2'])] }));
    expect(records.find((r) => r.name.includes('.a.'))).toEqual({
      name: '*.gateway.a.dev-team.clusters.xcc.test',
      type: 'CNAME',
      ttl: 30,
      values: ['lb.example.com'],
    });
    expect(
      records.filter((r) => r.name === '*.gateway.dev-team.clusters.xcc.test').map((r) => r.type),
    ).toEqual(['A']);
  });

  it('publishes cluster IPs under the same names, A and AAAA for a dual-stack Service', () => {
    const records = recordsFor(
      input({
        spec: spec({ resolutionType: 'clusterIP', gatewayLabel: 'db' }),
        facts: [
          facts('a', ['10.96.0.10', 'fd00:10:96::a']),
          facts('b', [], { state: 'HeadlessService', message: 'headless' }),
          facts('c', ['10.97.0.10']),
        ],
      }),
    );
    expect(records.map((r) => `${r.name} ${r.type} ${r.values.join(',')}`)).toEqual([
      '*.db.a.dev-team.clusters.xcc.test A 10.96.0.10',
      '*.db.a.dev-team.clusters.xcc.test AAAA fd00:10:96::a',
      '*.db.c.dev-team.clusters.xcc.test A 10.97.0.10',
      '*.db.dev-team.clusters.xcc.test A 10.96.0.10,10.97.0.10',
      '*.db.dev-team.clusters.xcc.test AAAA fd00:10:96::a',
    ]);
  });

  it('headless: pod addresses, per-pod names and SRV records with per-pod targets', () => {
    const pg = { name: 'pg', protocol: 'TCP', port: 5432 };
    const records = recordsFor(
      input({
        spec: spec({ resolutionType: 'headless', gatewayLabel: 'pg' }),
        facts: [
          facts('a', ['10.1.0.1', '10.1.0.2', 'fd00::1'], {
            endpoints: [
              { hostname: 'pg-0', addresses: ['10.1.0.1', 'fd00::1'], ports: [pg] },
              { hostname: 'pg-1', addresses: ['10.1.0.2'], ports: [pg] },
            ],
          }),
          facts('b', ['10.2.0.1'], {
            endpoints: [{ addresses: ['10.2.0.1'], ports: [{ ...pg, port: 6432 }] }],
          }),
          facts('c', [], { readyEndpoints: 0, totalEndpoints: 3 }),
        ],
      }),
    );
    const a = 'pg.a.dev-team.clusters.xcc.test';
    const b = 'pg.b.dev-team.clusters.xcc.test';
    const any = 'pg.dev-team.clusters.xcc.test';
    expect(records.map((r) => `${r.name} ${r.type} ${r.values.join(',')}`)).toEqual([
      `*.${a} A 10.1.0.1,10.1.0.2`,
      `*.${a} AAAA fd00::1`,
      `*.${b} A 10.2.0.1`,
      `*.${any} A 10.1.0.1,10.1.0.2,10.2.0.1`,
      `*.${any} AAAA fd00::1`,
      `_pg._tcp.${a} SRV 0 0 5432 pg-0.${a}.,0 0 5432 pg-1.${a}.`,
      `_pg._tcp.${b} SRV 0 0 6432 ${b}.`,
      `_pg._tcp.${any} SRV 0 0 5432 pg-0.${a}.,0 0 5432 pg-1.${a}.,0 0 6432 ${b}.`,
      `pg-0.${a} A 10.1.0.1`,
      `pg-0.${a} AAAA fd00::1`,
      `pg-1.${a} A 10.1.0.2`,
      `${a} A 10.1.0.1,10.1.0.2`,
      `${a} AAAA fd00::1`,
      `${b} A 10.2.0.1`,
    ]);
  });

  it('headless: a cluster whose endpoints are all unready leaves the cluster-independent name', () => {
    const records = recordsFor(
      input({
        spec: spec({ resolutionType: 'headless' }),
        facts: [
          facts('a', ['10.1.0.1'], { endpoints: [{ addresses: ['10.1.0.1'], ports: [] }] }),
          facts('b', [], { endpoints: [], readyEndpoints: 0, totalEndpoints: 2 }),
        ],
      }),
    );
    expect(records.filter((r) => r.name.startsWith('*.gateway.dev-team')).map((r) => r.values)).toEqual([
      ['10.1.0.1'],
    ]);
    expect(records.some((r) => r.name.includes('.b.'))).toBe(false);
  });

  describe('answer localFirst', () => {
    const any = '*.gateway.dev-team.clusters.xcc.test';
    const pg = { name: 'pg', protocol: 'TCP', port: 5432 };
    const three = [
      facts('a', ['10.0.0.1'], { endpoints: [{ hostname: 'pg-0', addresses: ['10.0.0.1'], ports: [pg] }] }),
      facts('b', ['10.0.0.2'], { endpoints: [{ hostname: 'pg-0', addresses: ['10.0.0.2'], ports: [pg] }] }),
      facts('c', []),
    ];
    it.each([
      ['a selected cluster with ready addresses answers its own', 'a', ['10.0.0.1'], ['a']],
      ['a selected cluster with none ready gets the union', 'c', ['10.0.0.1', '10.0.0.2'], ['a', 'b']],
      ['a cluster that is not selected gets the union', 'z', ['10.0.0.1', '10.0.0.2'], ['a', 'b']],
    ])('%s', (_what, receivingCluster, addresses, srvClusters) => {
      const records = recordsFor(
        input({
          spec: spec({ resolutionType: 'headless', answer: 'localFirst' }),
          facts: three,
          receivingCluster,
        }),
      );
      expect(records.find((r) => r.name === any)?.values).toEqual(addresses);
      expect(records.find((r) => r.name === '_pg._tcp.gateway.dev-team.clusters.xcc.test')?.values).toEqual(
        srvClusters.map((c) => `0 0 5432 pg-0.gateway.${c}.dev-team.clusters.xcc.test.`),
      );
      // The per-cluster names are the same everywhere.
      expect(records.filter((r) => r.name.startsWith('*.gateway.a.')).map((r) => r.values)).toEqual([
        ['10.0.0.1'],
      ]);
    });

    it('shares one view between receiving clusters that see the same, and the per-cluster records between views', () => {
      const views = shardViews(
        input({ spec: spec({ resolutionType: 'headless', answer: 'localFirst' }), facts: three }),
      );
      expect(['a', 'b', 'c', 'z'].map((c) => views.viewOf(c))).toEqual(['a', 'b', '', '']);
      expect(views.shards('c')).toBe(views.shards('z'));
      // The same shards as computed alone for each receiving cluster.
      for (const receivingCluster of ['a', 'b', 'c'])
        expect(views.shards(receivingCluster)).toEqual(
          shardsFor(
            input({
              spec: spec({ resolutionType: 'headless', answer: 'localFirst' }),
              facts: three,
              receivingCluster,
            }),
          ),
        );
      // Seen from a, b's shard holds b's own names only: the very list the union view extends.
      expect(
        views
          .shards('a')
          .get('b')!
          .some((r) => r.name === any),
      ).toBe(false);
    });

    it('answer all ignores the receiving cluster', () => {
      const records = recordsFor(input({ facts: three, receivingCluster: 'a' }));
      expect(records.find((r) => r.name === any)?.values).toEqual(['10.0.0.1', '10.0.0.2']);
    });
  });

  it('custom host names answer like the cluster-independent name', () => {
    const records = recordsFor(
      input({
        facts: [facts('a', ['10.0.0.1', 'fd00::1']), facts('b', ['10.0.0.2'])],
        hostnames: ['db.xcc.test'],
      }),
    );
    expect(
      records.filter((r) => r.name === 'db.xcc.test').map((r) => `${r.type} ${r.values.join(',')}`),
    ).toEqual(['A 10.0.0.1,10.0.0.2', 'AAAA fd00::1']);
  });

  it('publishes node addresses and SRV records for nodePort', () => {
    const records = recordsFor(
      input({
        spec: spec({ resolutionType: 'nodePort', gatewayLabel: 'gw', ttl: 60 }),
        facts: [
          facts('a', ['192.168.1.1', '192.168.1.2'], {
            ports: [{ name: 'https', protocol: 'TCP', port: 30443 }],
          }),
        ],
      }),
    );
    expect(records).toEqual([
      {
        name: '*.gw.a.dev-team.clusters.xcc.test',
        type: 'A',
        ttl: 60,
        values: ['192.168.1.1', '192.168.1.2'],
      },
      { name: '*.gw.dev-team.clusters.xcc.test', type: 'A', ttl: 60, values: ['192.168.1.1', '192.168.1.2'] },
      {
        name: '_https._tcp.gw.a.dev-team.clusters.xcc.test',
        type: 'SRV',
        ttl: 60,
        values: ['0 0 30443 gw.a.dev-team.clusters.xcc.test.'],
      },
      {
        name: '_https._tcp.gw.dev-team.clusters.xcc.test',
        type: 'SRV',
        ttl: 60,
        values: ['0 0 30443 gw.a.dev-team.clusters.xcc.test.'],
      },
      { name: 'gw.a.dev-team.clusters.xcc.test', type: 'A', ttl: 60, values: ['192.168.1.1', '192.168.1.2'] },
    ]);
  });

  it("keeps an unreachable cluster's last known addresses and leaves out clusters without any", () => {
    const records = recordsFor(
      input({
        facts: [
          facts('a', ['10.0.0.1'], { state: 'Unreachable' }),
          facts('b', [], { state: 'ServiceNotFound' }),
        ],
      }),
    );
    expect(records.map((r) => r.name)).toEqual([
      '*.gateway.a.dev-team.clusters.xcc.test',
      '*.gateway.dev-team.clusters.xcc.test',
    ]);
  });

  it('leaves out domains lost in a conflict', () => {
    const records = recordsFor(
      input({ facts: [facts('a', ['10.0.0.1'])], excludedDomains: ['gateway.dev-team.clusters.xcc.test'] }),
    );
    expect(records.map((r) => r.name)).toEqual(['*.gateway.a.dev-team.clusters.xcc.test']);
  });

  it('gives no record sets without clusters with addresses', () => {
    expect(plannedSets(input({}), 'capi-dns')).toEqual([]);
    expect(plannedSets(input({ facts: [facts('a', [])] }), 'capi-dns')).toEqual([]);
  });

  it('writes one set per source cluster, named and labelled after namespace, GatewayDNS and cluster', () => {
    const sets = plannedSets(
      input({ facts: [facts('b', ['10.0.0.2']), facts('a', ['10.0.0.1'])] }),
      'capi-dns',
    );
    expect(sets.map((s) => s.metadata)).toEqual(
      ['a', 'b'].map((c) => ({
        name: `dev-team.gw.${c}`,
        namespace: 'capi-dns',
        labels: {
          'app.kubernetes.io/managed-by': 'capi-dns-controller',
          'connectivity.tanzu.vmware.com/gatewaydns-namespace': 'dev-team',
          'connectivity.tanzu.vmware.com/gatewaydns-name': 'gw',
          'connectivity.tanzu.vmware.com/source-cluster': c,
        },
      })),
    );
    // Each holds its own cluster's names and its share of the cluster-independent name.
    expect(sets[0]!.spec.records).toEqual([
      { name: '*.gateway.a.dev-team.clusters.xcc.test', type: 'A', ttl: 30, values: ['10.0.0.1'] },
      { name: '*.gateway.dev-team.clusters.xcc.test', type: 'A', ttl: 30, values: ['10.0.0.1'] },
    ]);
  });

  it('changes only the shard of the cluster that changed', () => {
    const before = shardsFor(input({ facts: [facts('a', ['10.0.0.1']), facts('b', ['10.0.0.2'])] }));
    const after = shardsFor(input({ facts: [facts('a', ['10.0.0.1']), facts('b', ['10.0.0.3'])] }));
    expect(after.get('a')).toEqual(before.get('a'));
    expect(after.get('b')).not.toEqual(before.get('b'));
  });

  it('puts the CNAME of host-name-only clusters in one shard only, and none once a cluster has an address', () => {
    const hostsOnly = shardsFor(
      input({ facts: [facts('a', ['lb-b.example.com']), facts('b', ['lb-a.example.com'])] }),
    );
    const cnames = [...hostsOnly].flatMap(([c, rs]) =>
      rs
        .filter((r) => r.type === 'CNAME' && r.name.startsWith('*.gateway.dev-team'))
        .map((r) => [c, r.values]),
    );
    expect(cnames).toEqual([['b', ['lb-a.example.com']]]);
    const mixed = shardsFor(input({ facts: [facts('a', ['lb.example.com']), facts('b', ['10.0.0.2'])] }));
    expect(mixed.get('a')!.map((r) => r.name)).toEqual(['*.gateway.a.dev-team.clusters.xcc.test']);
  });

  it('is deterministic whatever the order of facts', () => {
    const f = [facts('b', ['10.0.0.2']), facts('a', ['10.0.0.1'])];
    expect(recordsFor(input({ facts: f }))).toEqual(recordsFor(input({ facts: [...f].reverse() })));
  });
});

describe('spec.gatewayRef', () => {
  const gatewaySpec = () => {
    const v = validateGatewayDnsSpec({
      clusterSelector: {},
      gatewayRef: { namespace: 'infra', name: 'edge' },
    });
    if (!v.valid) throw new Error(v.message);
    return v.spec;
  };
  const route = (name: string) => ({ name, route: 'HTTPRoute shop/web' });
  const ports = [{ name: 'https', protocol: 'TCP', port: 443 }];

  it("answers a route's host name with the addresses of the clusters whose Gateway accepted it, and the listeners as SRV", () => {
    const records = recordsFor(
      input({
        spec: gatewaySpec(),
        hostnames: ['both.apps.corp.internal', 'shop.apps.corp.internal'],
        facts: [
          facts('a', ['203.0.113.1'], {
            ports,
            routeHostnames: [route('shop.apps.corp.internal'), route('both.apps.corp.internal')],
          }),
          facts('b', ['203.0.113.2'], { ports, routeHostnames: [route('both.apps.corp.internal')] }),
          facts('c', [], {
            state: 'GatewayNotProgrammed',
            routeHostnames: [route('only-c.apps.corp.internal')],
          }),
        ],
      }),
    );
    const at = (name: string) =>
      records.filter((r) => r.name === name).map((r) => `${r.type} ${r.values.join(',')}`);
    expect(at('shop.apps.corp.internal')).toEqual(['A 203.0.113.1']);
    expect(at('both.apps.corp.internal')).toEqual(['A 203.0.113.1,203.0.113.2']);
    expect(at('_https._tcp.gateway.a.dev-team.clusters.xcc.test')).toEqual([
      'SRV 0 0 443 gateway.a.dev-team.clusters.xcc.test.',
    ]);
    expect(at('_https._tcp.gateway.dev-team.clusters.xcc.test')).toEqual([
      'SRV 0 0 443 gateway.a.dev-team.clusters.xcc.test.,0 0 443 gateway.b.dev-team.clusters.xcc.test.',
    ]);
  });

  it("does not answer a route's name from clusters that lack the route, even when its own cluster has no address", () => {
    const records = recordsFor(
      input({
        spec: gatewaySpec(),
        hostnames: ['only-c.apps.corp.internal'],
        facts: [
          facts('a', ['203.0.113.1']),
          facts('c', [], {
            state: 'GatewayNotProgrammed',
            routeHostnames: [route('only-c.apps.corp.internal')],
          }),
        ],
      }),
    );
    expect(records.filter((r) => r.name === 'only-c.apps.corp.internal')).toEqual([]);
  });

  it('with localFirst, a cluster whose Gateway has the route answers with its own; another gets those that have it', () => {
    const spec = { ...gatewaySpec(), answer: 'localFirst' as const };
    const all = [
      facts('a', ['203.0.113.1'], { routeHostnames: [route('shop.apps.corp.internal')] }),
      facts('b', ['203.0.113.2'], { routeHostnames: [route('shop.apps.corp.internal')] }),
      facts('c', ['203.0.113.3']),
    ];
    const views = shardViews(input({ spec, hostnames: ['shop.apps.corp.internal'], facts: all }));
    const answer = (receiving: string) =>
      [...views.shards(receiving).values()]
        .flat()
        .filter((r) => r.name === 'shop.apps.corp.internal')
        .flatMap((r) => r.values)
        .sort();
    expect(answer('a')).toEqual(['203.0.113.1']);
    expect(answer('c')).toEqual(['203.0.113.1', '203.0.113.2']);
  });
});

describe('spec.gatewayRef with a traffic policy', () => {
  it("makes a route's name a candidate per Gateway, probed on the first listener's port, in its tier", () => {
    const v = validateGatewayDnsSpec({
      clusterSelector: {},
      gatewayRef: { namespace: 'infra', name: 'edge' },
      answer: 'failover',
      failover: [{ clusterSelector: { matchLabels: { region: 'eu' } } }],
      healthCheck: { protocol: 'TCP' },
    });
    if (!v.valid) throw new Error(v.message);
    const route = [{ name: 'shop.apps.corp.internal', route: 'HTTPRoute shop/web' }];
    const records = [
      ...shardsFor(
        input({
          spec: v.spec,
          hostnames: ['shop.apps.corp.internal'],
          clusterLabels: new Map([
            ['eu-1', { region: 'eu' }],
            ['us-1', { region: 'us' }],
          ]),
          facts: [
            facts('eu-1', ['203.0.113.1'], { probePort: 443, routeHostnames: route }),
            facts('us-1', ['203.0.113.2'], { probePort: 443, routeHostnames: route }),
          ],
        }),
      ).values(),
    ]
      .flat()
      .filter((r) => r.name === 'shop.apps.corp.internal');
    expect(
      records.map((r) => {
        const p = r.policy as { cluster: string; tier: number; healthCheck?: { port?: number } };
        return `${r.values.join()} ${p.cluster} tier ${p.tier} port ${p.healthCheck?.port}`;
      }),
    ).toEqual(['203.0.113.1 dev-team/eu-1 tier 0 port 443', '203.0.113.2 dev-team/us-1 tier 1 port 443']);
  });
});
