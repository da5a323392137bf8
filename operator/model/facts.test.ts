import type { V1Node, V1Service } from '@kubernetes/client-node';
import { observeService } from './facts.js';

const lb = { resolutionType: 'loadBalancer', nodeAddressTypes: ['ExternalIP', 'InternalIP'] } as const;
const np = { resolutionType: 'nodePort', nodeAddressTypes: ['ExternalIP', 'InternalIP'] } as const;

function node(name: string, ready: boolean, addresses: [string, string][], unschedulable = false): V1Node {
  return {
    metadata: { name },
    spec: { unschedulable },
    status: {
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
      addresses: addresses.map(([type, address]) => ({ type, address })),
    },
  };
}

describe('observeService', () => {
  it('reports a missing Service', () => {
    expect(observeService(undefined, [], { ...lb, nodeAddressTypes: [...lb.nodeAddressTypes] }).state).toBe(
      'ServiceNotFound',
    );
  });

  it('reads load balancer IPs and host names, sorted, IPv4 first', () => {
    const svc: V1Service = {
      status: {
        loadBalancer: {
          ingress: [{ hostname: 'lb.example' }, { ip: 'fd00::1' }, { ip: '10.0.0.9' }, { ip: '10.0.0.10' }],
        },
      },
    };
    expect(observeService(svc, [], { ...lb, nodeAddressTypes: [...lb.nodeAddressTypes] })).toEqual({
      state: 'Ready',
      addresses: ['10.0.0.10', '10.0.0.9', 'fd00::1', 'lb.example'],
      ports: [],
    });
  });

  it('says NoAddresses for a load balancer without ingress', () => {
    expect(observeService({ status: {} }, [], { ...lb, nodeAddressTypes: [] }).state).toBe('NoAddresses');
  });

  it('takes Ready schedulable nodes by address type preference, and the node ports', () => {
    const svc: V1Service = {
      spec: {
        ports: [
          { name: 'https', port: 443, protocol: 'TCP', nodePort: 30443 },
          { port: 80, protocol: 'TCP', nodePort: 30080 },
          { name: 'nope', port: 81 },
        ],
      },
    };
    const nodes = [
      node('n1', true, [
        ['InternalIP', '192.168.0.1'],
        ['ExternalIP', '203.0.113.1'],
      ]),
      node('n2', true, [['InternalIP', '192.168.0.2']]),
      node('n3', false, [['InternalIP', '192.168.0.3']]),
      node('n4', true, [['InternalIP', '192.168.0.4']], true),
    ];
    expect(observeService(svc, nodes, { ...np, nodeAddressTypes: [...np.nodeAddressTypes] })).toEqual({
      state: 'Ready',
      addresses: ['192.168.0.2', '203.0.113.1'],
      ports: [
        { name: '80', protocol: 'TCP', port: 30080 },
        { name: 'https', protocol: 'TCP', port: 30443 },
      ],
      probePort: 30443,
    });
    expect(observeService(svc, nodes, { ...np, nodeAddressTypes: ['InternalIP'] }).addresses).toEqual([
      '192.168.0.1',
      '192.168.0.2',
    ]);
  });

  const cip = { resolutionType: 'clusterIP', nodeAddressTypes: [] } as const;
  const clusterIpCases: [string, V1Service['spec'], string, string[]][] = [
    ['an IPv4 Service', { clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'] }, 'Ready', ['10.96.0.10']],
    [
      'an IPv6 Service',
      { clusterIP: 'fd00:10:96::a', clusterIPs: ['fd00:10:96::a'] },
      'Ready',
      ['fd00:10:96::a'],
    ],
    [
      'a dual-stack Service, IPv6 first',
      { clusterIP: 'fd00:10:96::a', clusterIPs: ['fd00:10:96::a', '10.96.0.10'] },
      'Ready',
      ['10.96.0.10', 'fd00:10:96::a'],
    ],
    ['an object from before clusterIPs', { clusterIP: '10.96.0.11' }, 'Ready', ['10.96.0.11']],
    ['a headless Service', { clusterIP: 'None', clusterIPs: ['None'] }, 'HeadlessService', []],
    ['an ExternalName Service', { type: 'ExternalName', externalName: 'db.example.com' }, 'NoAddresses', []],
  ];
  it.each(clusterIpCases)('clusterIP: %s', (_what, spec, state, addresses) => {
    const seen = observeService({ spec }, [], { ...cip, nodeAddressTypes: [] });
    expect([seen.state, seen.addresses, seen.ports]).toEqual([state, addresses, []]);
    if (state === 'HeadlessService') expect(seen.message).toMatch(/resolutionType: headless/);
    else expect(seen.message).toBeUndefined();
  });
});
