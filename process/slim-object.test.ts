import type { KubernetesObject } from '@kubernetes/client-node';
import { slimObject } from './slim-object.js';

describe('slimObject', () => {
  it('keeps who manages an object and drops the field sets', () => {
    const o = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: 'db',
        managedFields: [
          {
            manager: 'capi-dns-controller',
            operation: 'Apply',
            apiVersion: 'v1',
            time: new Date(0),
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:spec': { 'f:ports': {} } },
          },
          { manager: 'kube-controller-manager', operation: 'Update', subresource: 'status', fieldsV1: {} },
        ],
      },
      spec: { ports: [] },
    } as unknown as KubernetesObject;
    expect(slimObject(o)).toBe(o);
    expect(o.metadata?.managedFields).toEqual([
      { manager: 'capi-dns-controller', operation: 'Apply', apiVersion: 'v1' },
      { manager: 'kube-controller-manager', operation: 'Update', subresource: 'status' },
    ]);
    expect((o as unknown as { spec: unknown }).spec).toEqual({ ports: [] });
  });

  it('leaves objects without managed fields as they are', () => {
    const o: KubernetesObject = { metadata: { name: 'x' } };
    expect(slimObject(o)).toEqual({ metadata: { name: 'x' } });
  });
});
