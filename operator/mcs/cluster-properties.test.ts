import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { CLUSTERPROPERTY_CRD } from '../../api/index.js';
import { clusterPropertyObjects, propertyConflict, propertyContent } from './cluster-properties.js';

describe('ClusterProperty', () => {
  it('the CRD in crds/about is the one the operator creates', () => {
    const file = path.join(
      path.dirname(fileURLToPath(import.meta.url)),
      '..',
      '..',
      'crds',
      'about',
      'about.k8s.io_clusterproperties.yaml',
    );
    expect(parse(readFileSync(file, 'utf8'))).toEqual(CLUSTERPROPERTY_CRD);
  });

  it('a member gets its id and its ClusterSet, both ours by label', () => {
    const [id, set] = clusterPropertyObjects('cluster-a', 'dev-team');
    expect([id?.metadata?.name, id?.spec?.value]).toEqual(['cluster.clusterset.k8s.io', 'cluster-a']);
    expect([set?.metadata?.name, set?.spec?.value]).toEqual(['clusterset.k8s.io', 'dev-team']);
    expect(propertyContent(id!)).not.toEqual(propertyContent({ ...id!, metadata: { name: 'x' } }));
  });

  it("someone else's id is never overwritten: the cluster is left out, saying what to do; theirs with our value is kept", () => {
    const theirs = (name: string, value: string) => ({
      apiVersion: 'about.k8s.io/v1alpha1',
      kind: 'ClusterProperty',
      metadata: { name },
      spec: { value },
    });
    const [ours] = clusterPropertyObjects('cluster-a', 'dev-team');
    expect(propertyConflict([], 'cluster-a', 'dev-team')).toBeUndefined();
    // Ours with another value (a renamed Cluster): ours to change.
    const renamed = { ...ours!, spec: { value: 'old-name' } };
    expect(propertyConflict([renamed], 'cluster-a', 'dev-team')).toBeUndefined();
    expect(
      propertyConflict([theirs('cluster.clusterset.k8s.io', 'cluster-a')], 'cluster-a', 'dev-team'),
    ).toBeUndefined();
    expect(
      propertyConflict([theirs('cluster.clusterset.k8s.io', 'prod-eu-1')], 'cluster-a', 'dev-team'),
    ).toBe(
      'ClusterProperty cluster.clusterset.k8s.io is "prod-eu-1", set by someone else, not "cluster-a": left out of ClusterSet dev-team (KEP-2149: a member\'s id does not change); delete that ClusterProperty, or set it to the value capi-dns gives, for the cluster to join',
    );
    expect(propertyConflict([theirs('clusterset.k8s.io', 'other-set')], 'cluster-a', 'dev-team')).toMatch(
      /^ClusterProperty clusterset.k8s.io is "other-set", set by someone else, not "dev-team"/,
    );
  });
});
