// The conditions of the Multi-Cluster Services objects, and their reasons,
// in one place: KEP-1645's on a ServiceExport, ours on a ServiceImport.

/** A ServiceExport's conditions (Multi-Cluster Services, operator/mcs/). */
export const EXPORT_CONDITIONS = { Valid: 'Valid', Ready: 'Ready', Conflict: 'Conflict' } as const;

/** KEP-1645's reasons (sigs.k8s.io/mcs-api v1beta1), the ones we use. */
export const EXPORT_REASONS = {
  Valid: 'Valid',
  NoService: 'NoService',
  InvalidServiceType: 'InvalidServiceType',
  /** The export-to annotation is no label selector. */
  InvalidExportTo: 'InvalidExportTo',
  Exported: 'Exported',
  Pending: 'Pending',
  Failed: 'Failed',
  NoConflicts: 'NoConflicts',
  TypeConflict: 'TypeConflict',
  PortConflict: 'PortConflict',
  SessionAffinityConflict: 'SessionAffinityConflict',
  SessionAffinityConfigConflict: 'SessionAffinityConfigConflict',
  InternalTrafficPolicyConflict: 'InternalTrafficPolicyConflict',
  TrafficDistributionConflict: 'TrafficDistributionConflict',
  IPFamilyConflict: 'IPFamilyConflict',
  LabelsConflict: 'LabelsConflict',
  AnnotationsConflict: 'AnnotationsConflict',
} as const;
export type ExportReason = (typeof EXPORT_REASONS)[keyof typeof EXPORT_REASONS];

/**
 * On a ServiceImport we keep: whether every cluster whose exports make it up answers; when one does
 * not, its last known endpoints stay in the import and the condition says which and since when.
 */
export const IMPORT_SOURCES_REACHABLE = 'SourcesReachable';
export const IMPORT_REASONS = {
  AllReachable: 'AllReachable',
  SourceUnreachable: 'SourceUnreachable',
} as const;
export type ImportReason = (typeof IMPORT_REASONS)[keyof typeof IMPORT_REASONS];
