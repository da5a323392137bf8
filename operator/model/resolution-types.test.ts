import { RESOLUTION_TYPES, resolutionTypeOf } from './resolution-types.js';

describe('RESOLUTION_TYPES: one entry per resolution type', () => {
  it.each([
    ['loadBalancer', { nodePorts: false, headless: false, readsEndpointSlices: false }],
    ['nodePort', { nodePorts: true, headless: false, readsEndpointSlices: false }],
    ['clusterIP', { nodePorts: false, headless: false, readsEndpointSlices: true }],
    ['headless', { nodePorts: false, headless: true, readsEndpointSlices: true }],
  ] as const)('%s', (type, want) => expect(RESOLUTION_TYPES[type]).toMatchObject(want));

  it('a raw spec without a type, or with one the schema refused, reads as the default', () => {
    expect(resolutionTypeOf(undefined)).toBe(RESOLUTION_TYPES.loadBalancer);
    expect(resolutionTypeOf('anycast')).toBe(RESOLUTION_TYPES.loadBalancer);
    expect(resolutionTypeOf('nodePort')).toBe(RESOLUTION_TYPES.nodePort);
  });

  it('clusterIP leaves a cluster out while no endpoint behind its IP is ready', () => {
    const service = { metadata: { name: 'db' }, spec: { clusterIP: '10.0.0.1', clusterIPs: ['10.0.0.1'] } };
    const spec = { resolutionType: 'clusterIP' as const, nodeAddressTypes: [] };
    expect(RESOLUTION_TYPES.clusterIP.observe(service, [], [], spec).state).toBe('NoAddresses');
    expect(RESOLUTION_TYPES.loadBalancer.observe(undefined, [], [], spec).state).toBe('ServiceNotFound');
  });
});
