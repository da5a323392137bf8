import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { CLUSTERPROPERTY_CRD } from '../../api/index.js';
import { clusterPropertyObjects, propertyContent } from './cluster-properties.js';

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
});
