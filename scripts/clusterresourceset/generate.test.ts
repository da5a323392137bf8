import { parseAllDocuments } from 'yaml';
import { clusterResourceSet, parseManifests, WORKLOAD_LABEL } from './generate.js';

const objects = parseManifests(`
apiVersion: v1
kind: Namespace
metadata: {name: capi-dns}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: capi-dns-server, namespace: capi-dns}
spec: {replicas: 2}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: dnsrecordsets.connectivity.tanzu.vmware.com}
`);

describe('clusterResourceSet', () => {
  const docs = parseAllDocuments(clusterResourceSet(objects)).map((d) => d.toJS());
  const [cluster, namespaced, set] = docs;

  it('puts what the rest needs (Namespaces, CRDs) in the first ConfigMap, the rest in the second, in order', () => {
    expect(docs).toHaveLength(3);
    const kinds = (cm: { data: Record<string, string> }) =>
      parseAllDocuments(cm.data['objects.yaml'] ?? '').map((d) => (d.toJS() as { kind: string }).kind);
    expect(kinds(cluster)).toEqual(['Namespace', 'CustomResourceDefinition']);
    expect(kinds(namespaced)).toEqual(['Deployment']);
  });

  it('applies them in that order to Clusters with the label, again when they change', () => {
    expect(set).toEqual({
      apiVersion: 'addons.cluster.x-k8s.io/v1beta2',
      kind: 'ClusterResourceSet',
      metadata: { name: 'capi-dns-workload' },
      spec: {
        clusterSelector: { matchLabels: { [WORKLOAD_LABEL]: 'enabled' } },
        strategy: 'Reconcile',
        resources: [
          { kind: 'ConfigMap', name: 'capi-dns-workload-cluster' },
          { kind: 'ConfigMap', name: 'capi-dns-workload-namespaced' },
        ],
      },
    });
  });

  it('keeps every object as it was', () => {
    const back = [cluster, namespaced].flatMap((cm: { data: Record<string, string> }) =>
      parseAllDocuments(cm.data['objects.yaml'] ?? '').map((d) => d.toJS()),
    );
    expect(back).toEqual(expect.arrayContaining(objects as object[]));
    expect(back).toHaveLength(objects.length);
  });

  it('writes the objects as YAML 1.1, which Cluster API reads: no string turns boolean', () => {
    const text = clusterResourceSet([
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'on', b: 'y' } } as never,
    ]);
    const data = (parseAllDocuments(text)[0]?.toJS() as { data: Record<string, string> }).data[
      'objects.yaml'
    ];
    expect(data).toContain('a: "on"');
    expect(data).toContain('b: "y"');
  });

  it('refuses an object without a name, and a stream that does not parse', () => {
    expect(() => clusterResourceSet([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: {} }])).toThrow(
      /without apiVersion, kind or metadata.name/,
    );
    expect(() => parseManifests('a: [')).toThrow(/document 1/);
  });
});
