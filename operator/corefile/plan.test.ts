import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { planCorefile } from './plan.js';

const kubeadm = readFileSync(
  path.join(path.dirname(fileURLToPath(import.meta.url)), 'testdata', 'kubeadm.Corefile'),
  'utf8',
);
const zones = ['xcc.test', 'apps.corp.internal'];
const clustersetZones = ['clusterset.local'];

describe('planCorefile', () => {
  it('forwards every zone, and the clusterset zone in a member, to the target', () => {
    const plan = planCorefile({
      corefile: kubeadm,
      target: '10.96.0.53',
      zones,
      clustersetZones,
      clustersetZone: 'clusterset.local',
    });
    expect(plan.changed).toBe(true);
    expect(plan.forwards).toBe('10.96.0.53');
    expect(plan.forwardedZones).toEqual(['xcc.test', 'apps.corp.internal', 'clusterset.local']);
    for (const zone of plan.forwardedZones) expect(plan.corefile).toContain(`${zone}:53 {`);
  });

  it('is unchanged when applied twice, and removes every block of ours when not wired', () => {
    const wired = planCorefile({
      corefile: kubeadm,
      target: '10.96.0.53',
      zones,
      clustersetZones,
      clustersetZone: 'clusterset.local',
    });
    expect(
      planCorefile({
        corefile: wired.corefile,
        target: '10.96.0.53',
        zones,
        clustersetZones,
        clustersetZone: 'clusterset.local',
      }).changed,
    ).toBe(false);
    const unwired = planCorefile({
      corefile: wired.corefile,
      zones,
      clustersetZones,
      clustersetZone: 'clusterset.local',
    });
    expect(unwired).toMatchObject({ changed: true, corefile: kubeadm, forwardedZones: [] });
    expect(unwired.forwards).toBeUndefined();
  });

  it('removes the clusterset block from a cluster that left its ClusterSet', () => {
    const member = planCorefile({
      corefile: kubeadm,
      target: '10.96.0.53',
      zones,
      clustersetZones,
      clustersetZone: 'clusterset.local',
    });
    const left = planCorefile({ corefile: member.corefile, target: '10.96.0.53', zones, clustersetZones });
    expect(left.changed).toBe(true);
    expect(left.corefile).not.toContain('clusterset.local:53 {');
    expect(left.forwardedZones).toEqual(zones);
  });
});
