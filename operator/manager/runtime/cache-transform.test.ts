import { stripManagedFields } from './cache-transform.js';

describe('stripManagedFields', () => {
  it('keeps each manager and operation, and drops the field sets', () => {
    const object = {
      metadata: {
        name: 'a',
        managedFields: [
          {
            manager: 'capi-dns-controller',
            operation: 'Apply',
            apiVersion: 'v1',
            time: '2026-11-26T00:00:00Z',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:spec': { 'f:records': {} } },
          },
          { manager: 'dns-server', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: {} },
        ],
      },
      spec: { records: [] },
    };
    expect(stripManagedFields(object)).toEqual({
      metadata: {
        name: 'a',
        managedFields: [
          { manager: 'capi-dns-controller', operation: 'Apply' },
          { manager: 'dns-server', operation: 'Update' },
        ],
      },
      spec: { records: [] },
    });
  });

  it('leaves an object without managedFields or metadata as it is', () => {
    expect(stripManagedFields({ metadata: { name: 'a' } })).toEqual({ metadata: { name: 'a' } });
    expect(stripManagedFields({ kind: 'Status' })).toEqual({ kind: 'Status' });
  });
});
