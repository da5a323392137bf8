import {
  crdServesExportClusters,
  exportClusters,
  exportConditions,
  readyCondition,
} from './export-status.js';
import type { ExportCondition } from './desired.js';

const valid: ExportCondition = { type: 'Valid', status: 'True', reason: 'Valid', message: 'ok' };
const invalid: ExportCondition = {
  type: 'Valid',
  status: 'False',
  reason: 'NoService',
  message: 'no Service',
};
const conflict: ExportCondition = {
  type: 'Conflict',
  status: 'True',
  reason: 'PortConflict',
  message: 'ports differ',
};
const now = new Date('2026-11-27T12:00:00Z');

describe('readyCondition', () => {
  it('is Pending for an invalid export, Failed with the failures, Exported otherwise', () => {
    expect(readyCondition([invalid], [])).toMatchObject({ status: 'False', reason: 'Pending' });
    expect(readyCondition([valid], ['b: refused'])).toMatchObject({
      status: 'False',
      reason: 'Failed',
      message: 'not yet imported everywhere (retried): b: refused',
    });
    expect(readyCondition([valid], [])).toMatchObject({ status: 'True', reason: 'Exported' });
  });
});

describe('exportConditions', () => {
  it('sets the planned conditions and Ready, sorted by type, with the generation', () => {
    const next = exportConditions([], [valid, conflict], [], 3, now);
    expect(next.conditions.map((c) => [c.type, c.status, c.observedGeneration])).toEqual([
      ['Conflict', 'True', 3],
      ['Ready', 'True', 3],
      ['Valid', 'True', 3],
    ]);
    expect(next).toMatchObject({ changed: true, conflict: true });
  });

  it('drops a Conflict no longer planned, and says nothing changed when it is as it was', () => {
    const first = exportConditions([], [valid, conflict], [], 1, now);
    const resolved = exportConditions(first.conditions, [valid], [], 1, now);
    expect(resolved.conditions.map((c) => c.type)).toEqual(['Ready', 'Valid']);
    expect(resolved).toMatchObject({ changed: true, conflict: false });
    expect(
      exportConditions(resolved.conditions, [valid], [], 1, new Date(now.getTime() + 1000)).changed,
    ).toBe(false);
  });
});

describe('status.clusters (KEP PR #6329)', () => {
  it('lists the members reached as ServiceImport-style entries', () => {
    expect(exportClusters(['east', 'west'])).toEqual([{ cluster: 'east' }, { cluster: 'west' }]);
    expect(exportClusters(undefined)).toEqual([]);
  });

  it('is written only where the ServiceExport CRD has the field', () => {
    const crd = (status: object) => ({
      spec: { versions: [{ name: 'v1alpha1', schema: { openAPIV3Schema: { properties: { status } } } }] },
    });
    expect(crdServesExportClusters(crd({ properties: { conditions: {} } }), 'v1alpha1')).toBe(false);
    expect(crdServesExportClusters(crd({ properties: { clusters: { type: 'array' } } }), 'v1alpha1')).toBe(
      true,
    );
    expect(crdServesExportClusters(crd({ properties: { clusters: { type: 'array' } } }), 'v1beta1')).toBe(
      false,
    );
    expect(crdServesExportClusters(undefined, 'v1alpha1')).toBe(false);
  });
});
