// The conditions of one ServiceExport (pure): Valid and Conflict as planned,
// and Ready: True once every member that answers holds the import, False with
// the failures otherwise; an invalid export is not exported (Pending).
import type { Condition } from '../../api/index.js';
import { setCondition } from '../model/conditions.js';
import { EXPORT_CONDITIONS } from './conditions.js';
import { sameJson } from '../manager/runtime/equal.js';
import type { ExportCondition } from './desired.js';

export function readyCondition(
  planned: readonly ExportCondition[],
  failed: readonly string[],
): ExportCondition {
  const valid = planned.find((c) => c.type === EXPORT_CONDITIONS.Valid)?.status === 'True';
  if (!valid)
    return {
      type: EXPORT_CONDITIONS.Ready,
      status: 'False',
      reason: 'Pending',
      message: 'not exported: the export is not valid',
    };
  if (failed.length)
    return {
      type: EXPORT_CONDITIONS.Ready,
      status: 'False',
      reason: 'Failed',
      message: `not yet imported everywhere (retried): ${failed.join('; ')}`,
    };
  return {
    type: EXPORT_CONDITIONS.Ready,
    status: 'True',
    reason: 'Exported',
    message:
      'imported into every member cluster of the ClusterSet it is exported to (all, or those its export-to annotation selects) that has the namespace',
  };
}

/**
 * The export's next conditions, sorted by type: the planned ones and Ready set over what it has
 * (a Conflict no longer planned goes), and whether they differ from what it has.
 */
export function exportConditions(
  previous: readonly Condition[],
  planned: readonly ExportCondition[],
  failed: readonly string[],
  generation: number | undefined,
  now: Date,
): { conditions: Condition[]; changed: boolean; conflict: boolean } {
  let next: Condition[] = previous.filter(
    (c) => !(c.type === EXPORT_CONDITIONS.Conflict && !planned.some((p) => p.type === c.type)),
  );
  for (const c of [...planned, readyCondition(planned, failed)])
    next = setCondition(next, { ...c, observedGeneration: generation }, now);
  next.sort(byType);
  return {
    conditions: next,
    changed: !sameJson([...previous].sort(byType), next),
    conflict: next.some((c) => c.type === EXPORT_CONDITIONS.Conflict && c.status === 'True'),
  };
}

function byType(a: Condition, b: Condition): number {
  return a.type.localeCompare(b.type);
}

/** ServiceExport status.clusters as KEP PR #6329 proposes it: ServiceImport's ClusterStatus entries. */
export function exportClusters(reached: readonly string[] | undefined): { cluster: string }[] {
  return (reached ?? []).map((cluster) => ({ cluster }));
}

/**
 * Whether a ServiceExport CRD has status.clusters at this version. sigs.k8s.io/mcs-api v0.5.2's
 * does not: the API server would prune the field from every write (and the reconcile write it
 * again each time), so it is written only where the installed CRD has it.
 */
export function crdServesExportClusters(crd: unknown, version: string): boolean {
  const versions = (crd as { spec?: { versions?: unknown } } | undefined)?.spec?.versions;
  if (!Array.isArray(versions)) return false;
  const v = (versions as { name?: string; schema?: { openAPIV3Schema?: SchemaNode } }[]).find(
    (x) => x.name === version,
  );
  return v?.schema?.openAPIV3Schema?.properties?.status?.properties?.clusters !== undefined;
}

interface SchemaNode {
  properties?: Record<string, SchemaNode | undefined>;
}
