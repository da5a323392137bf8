import { describe, expect, it } from '@jest/globals';
import { clustersetRecordSets, type McsSliceLike } from './clusterset-records.js';

const slice = (cluster: string, endpoints: McsSliceLike['endpoints']): McsSliceLike => ({
  metadata: {
    namespace: 'team',
    labels: {
      'multicluster.kubernetes.io/service-name': 'db',
      'multicluster.kubernetes.io/source-cluster': cluster,
    },
  },
  addressType: 'IPv4',
  endpoints,
});

const recordsOf = (sets: ReturnType<typeof clustersetRecordSets>) =>
  sets.flatMap((s) => s.set.spec.records.map((r) => `${r.name} ${r.type} ${r.values.join(',')}`));

describe('clustersetRecordSets (KEP-1645 DNS)', () => {
  it('ClusterSetIP: the import IPs at the name, SRV at the name and per named port to the name', () => {
    const sets = clustersetRecordSets(
      'clusterset.local',
      [
        {
          metadata: { name: 'web', namespace: 'team' },
          spec: {
            type: 'ClusterSetIP',
            ips: ['10.96.0.10'],
            ports: [
              { name: 'tcp', protocol: 'TCP', port: 42 },
              { name: 'udp', protocol: 'UDP', port: 42 },
            ],
          },
        },
      ],
      [],
    );
    expect(recordsOf(sets)).toEqual([
      'web.team.svc.clusterset.local A 10.96.0.10',
      'web.team.svc.clusterset.local SRV 0 100 42 web.team.svc.clusterset.local.',
      '_tcp._tcp.web.team.svc.clusterset.local SRV 0 100 42 web.team.svc.clusterset.local.',
      '_udp._udp.web.team.svc.clusterset.local SRV 0 100 42 web.team.svc.clusterset.local.',
    ]);
    expect(sets[0]?.set.spec.records.every((r) => r.ttl === 5)).toBe(true);
  });

  it('a ClusterSetIP import without an IP yet answers nothing', () => {
    expect(
      clustersetRecordSets(
        'clusterset.local',
        [{ metadata: { name: 'web', namespace: 'team' }, spec: { type: 'ClusterSetIP' } }],
        [],
      ),
    ).toEqual([]);
  });

  it('Headless: every ready endpoint of every cluster; per-pod names under the cluster id (by dashed address without a hostname); SRV to them', () => {
    const sets = clustersetRecordSets(
      'clusterset.local',
      [
        {
          metadata: { name: 'db', namespace: 'team' },
          spec: { type: 'Headless', ports: [{ name: 'pg', port: 5432 }] },
        },
      ],
      [
        slice('east', [
          { addresses: ['10.1.0.1'], hostname: 'db-0' },
          { addresses: ['10.1.0.2'], hostname: 'db-1', conditions: { ready: false } },
          { addresses: ['10.1.0.3'] },
        ]),
        slice('west', [{ addresses: ['10.2.0.1'], hostname: 'db-0' }]),
      ],
    );
    expect(recordsOf(sets)).toEqual([
      'db.team.svc.clusterset.local A 10.1.0.1,10.1.0.3,10.2.0.1',
      'db-0.east.db.team.svc.clusterset.local A 10.1.0.1',
      '10-1-0-3.east.db.team.svc.clusterset.local A 10.1.0.3',
      'db-0.west.db.team.svc.clusterset.local A 10.2.0.1',
      'db.team.svc.clusterset.local SRV 0 100 5432 10-1-0-3.east.db.team.svc.clusterset.local.,0 100 5432 db-0.east.db.team.svc.clusterset.local.,0 100 5432 db-0.west.db.team.svc.clusterset.local.',
      '_pg._tcp.db.team.svc.clusterset.local SRV 0 100 5432 db-0.east.db.team.svc.clusterset.local.,0 100 5432 10-1-0-3.east.db.team.svc.clusterset.local.,0 100 5432 db-0.west.db.team.svc.clusterset.local.',
    ]);
  });

  it('the same records give the same resourceVersion (the build reuses them), others another', () => {
    const si = {
      metadata: { name: 'web', namespace: 'team' },
      spec: { type: 'ClusterSetIP', ips: ['10.96.0.10'] },
    };
    const a = clustersetRecordSets('clusterset.local', [si], []);
    const b = clustersetRecordSets('clusterset.local', [structuredClone(si)], []);
    const c = clustersetRecordSets(
      'clusterset.local',
      [{ ...si, spec: { ...si.spec, ips: ['10.96.0.11'] } }],
      [],
    );
    expect(a[0]?.set.metadata.resourceVersion).toBe(b[0]?.set.metadata.resourceVersion);
    expect(a[0]?.set.metadata.resourceVersion).not.toBe(c[0]?.set.metadata.resourceVersion);
  });
});
