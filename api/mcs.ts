// The Multi-Cluster Services API (KEP-1645, multicluster.x-k8s.io) and the
// cluster identity it rests on (KEP-2149, about.k8s.io), as capi-dns speaks
// them: the names, labels and shapes the operator writes and the dns-server
// reads. Types are of the fields we use; the CRDs (crds/mcs/, upstream's
// files) are the full schema.
import type { Condition } from './gatewaydns.js';

export const MCS_GROUP = 'multicluster.x-k8s.io';
export const MCS_VERSION = 'v1beta1';
export const MCS_API_VERSION = `${MCS_GROUP}/${MCS_VERSION}`;
export const SERVICEEXPORT_PLURAL = 'serviceexports';
export const SERVICEIMPORT_PLURAL = 'serviceimports';

/** The management-namespace label that makes its Clusters one ClusterSet (SIG Multicluster's ClusterProfile convention). */
export const CLUSTERSET_LABEL = 'multicluster.x-k8s.io/clusterset';

/** The MCS EndpointSlice label naming the imported Service (KEP-1645). */
export const MCS_SERVICE_NAME_LABEL = 'multicluster.kubernetes.io/service-name';
/**
 * On an MCS EndpointSlice whose exporting cluster does not answer: since when (RFC 3339). Its
 * endpoints are the last seen, kept (as the zone's records keep a cluster's last addresses).
 */
/**
 * On a ServiceExport: the member clusters it is exported to, as a label selector over their
 * Cluster API Cluster labels in the syntax of `kubectl -l` (`region=eu`, `env in (prod,staging)`);
 * absent, every member (ADR 0210). The upstream CRD has no field for it (mcs-api#168).
 */
export const MCS_EXPORT_TO_ANNOTATION = 'connectivity.tanzu.vmware.com/export-to';
export const MCS_SOURCE_UNREACHABLE_ANNOTATION = 'connectivity.tanzu.vmware.com/source-unreachable-since';
/** Our endpointslice.kubernetes.io/managed-by value on MCS EndpointSlices (not the mirrors'). */
export const MCS_CONTROLLER = 'mcs.capi-dns-controller.connectivity.tanzu.vmware.com';

export const ABOUT_GROUP = 'about.k8s.io';
export const ABOUT_VERSION = 'v1alpha1';
export const CLUSTERPROPERTY_PLURAL = 'clusterproperties';
/** KEP-2149's well-known properties: this cluster's id, and the ClusterSet it belongs to. */
export const CLUSTER_ID_PROPERTY = 'cluster.clusterset.k8s.io';
export const CLUSTERSET_PROPERTY = 'clusterset.k8s.io';

export type ServiceImportType = 'ClusterSetIP' | 'Headless';

export interface McsServicePort {
  name?: string;
  protocol?: string;
  appProtocol?: string;
  port: number;
}

export interface SessionAffinityConfig {
  clientIP?: { timeoutSeconds?: number };
}

/** ServiceImport status as the MCS API defines it: the exporting clusters, and conditions. */
export interface ServiceImportStatus {
  clusters?: { cluster: string }[];
  conditions?: Condition[];
}

export interface ServiceImportSpec {
  ports: McsServicePort[];
  ips?: string[];
  type: ServiceImportType;
  sessionAffinity?: string;
  sessionAffinityConfig?: SessionAffinityConfig;
  ipFamilies?: string[];
  internalTrafficPolicy?: string;
  trafficDistribution?: string;
}

export interface ServiceExportSpec {
  exportedLabels?: Record<string, string>;
  exportedAnnotations?: Record<string, string>;
}

/**
 * The ClusterProperty CRD (KEP-2149), created by the operator in a member
 * cluster that lacks it. A group under k8s.io needs the API-approval
 * annotation (the API server refuses the CRD without it); it names the KEP's
 * approval. crds/about/ holds the same object as YAML (a unit test keeps them equal).
 */
export const CLUSTERPROPERTY_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: {
    name: `${CLUSTERPROPERTY_PLURAL}.${ABOUT_GROUP}`,
    annotations: { 'api-approved.kubernetes.io': 'https://github.com/kubernetes/enhancements/pull/3084' },
  },
  spec: {
    group: ABOUT_GROUP,
    scope: 'Cluster',
    names: {
      kind: 'ClusterProperty',
      listKind: 'ClusterPropertyList',
      plural: CLUSTERPROPERTY_PLURAL,
      singular: 'clusterproperty',
    },
    versions: [
      {
        name: ABOUT_VERSION,
        served: true,
        storage: true,
        additionalPrinterColumns: [
          { name: 'value', type: 'string', jsonPath: '.spec.value' },
          { name: 'age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
        schema: {
          openAPIV3Schema: {
            description: 'ClusterProperty is a name/value pair about this cluster (KEP-2149).',
            type: 'object',
            required: ['spec'],
            properties: {
              apiVersion: { type: 'string' },
              kind: { type: 'string' },
              metadata: { type: 'object' },
              spec: {
                type: 'object',
                required: ['value'],
                properties: {
                  value: {
                    type: 'string',
                    minLength: 1,
                    maxLength: 128000,
                    description: 'The property value.',
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
} as const;
