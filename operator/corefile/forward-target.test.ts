import type { V1Service } from '@kubernetes/client-node';
import { forwardTarget } from './reconciler.js';

const service = (spec: V1Service['spec'], annotations?: Record<string, string>): V1Service => ({
  metadata: { name: 'capi-dns-server', namespace: 'capi-dns', annotations },
  spec,
});

describe('forwardTarget', () => {
  it.each([
    [
      'cluster IP on port 53',
      service({ clusterIP: '10.96.0.53', ports: [{ port: 53, protocol: 'UDP' }] }),
      '10.96.0.53',
    ],
    [
      'another UDP port',
      service({ clusterIP: '10.96.0.53', ports: [{ port: 5353, protocol: 'UDP' }] }),
      '10.96.0.53:5353',
    ],
    [
      'IPv6 on another port',
      service({ clusterIP: 'fd00::35', ports: [{ port: 5353, protocol: 'UDP' }] }),
      '[fd00::35]:5353',
    ],
    ['IPv6 on 53', service({ clusterIP: 'fd00::35', ports: [{ port: 53, protocol: 'UDP' }] }), 'fd00::35'],
    [
      'the annotation over the cluster IP',
      service(
        { clusterIP: '10.96.0.53' },
        { 'connectivity.tanzu.vmware.com/forward-address': ' 127.0.10.21:53 ' },
      ),
      '127.0.10.21:53',
    ],
    ['a headless Service', service({ clusterIP: 'None' }), undefined],
    ['no cluster IP yet', service({}), undefined],
  ])('%s', (_what, svc, want) => {
    expect(forwardTarget(svc)).toBe(want);
  });
});
