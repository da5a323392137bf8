// GatewayDNS: the management-cluster object that capi-dns-controller turns
// into DNSRecordSets in workload clusters. The CRD is
// crds/connectivity.tanzu.vmware.com_gatewaydns.yaml; GATEWAYDNS_SPEC_SCHEMA
// repeats its spec schema for ajv, because objects stored under an older CRD
// (or written before a field got stricter) still reach the operator.
import { API_VERSION, type ObjectMeta } from './dnsrecordset.js';

export const GATEWAYDNS_KIND = 'GatewayDNS';
export const GATEWAYDNS_PLURAL = 'gatewaydns';
/** Holds a GatewayDNS until its record sets are withdrawn from every workload cluster. */
export const GATEWAYDNS_FINALIZER = 'connectivity.tanzu.vmware.com/gatewaydns';

/**
 * loadBalancer, nodePort: the Service's gateway addresses. clusterIP: its
 * cluster IPs, for networks where service CIDRs route between clusters.
 * headless: its ready pod addresses from EndpointSlices, for routable pod networks.
 */
export const RESOLUTION_TYPES = ['loadBalancer', 'nodePort', 'clusterIP', 'headless'] as const;
export type ResolutionType = (typeof RESOLUTION_TYPES)[number];
export const NODE_ADDRESS_TYPES = ['ExternalIP', 'InternalIP', 'Hostname'] as const;
export type NodeAddressType = (typeof NODE_ADDRESS_TYPES)[number];

/**
 * How the cluster-independent name answers in each workload cluster. all: every
 * selected cluster's addresses. localFirst: a selected cluster with ready
 * addresses gets its own; the others, and one with none ready, get the union.
 */
export const ANSWER_POLICIES = ['all', 'localFirst'] as const;
export type AnswerPolicy = (typeof ANSWER_POLICIES)[number];
export const DEFAULT_ANSWER_POLICY: AnswerPolicy = 'all';

export const DEFAULT_GATEWAY_LABEL = 'gateway';
export const DEFAULT_RESOLUTION_TYPE: ResolutionType = 'loadBalancer';
export const DEFAULT_NODE_ADDRESS_TYPES: NodeAddressType[] = ['ExternalIP', 'InternalIP'];

export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface GatewayDNSSpec {
  clusterSelector: LabelSelector;
  /** "namespace/name" of the Service in each selected workload cluster. */
  service: string;
  resolutionType?: ResolutionType;
  answer?: AnswerPolicy;
  /** Names inside the zone that answer like the cluster-independent name. */
  hostnames?: string[];
  gatewayLabel?: string;
  nodeAddressTypes?: NodeAddressType[];
  ttl?: number;
  /** Also keep the Service as a local Service with EndpointSlices in every workload cluster of the namespace. */
  mirror?: MirrorSpec;
}

/**
 * Where the mirror lives in each consuming workload cluster: the Service
 * `<namespace>/<name>`, both defaulting to the source Service's.
 */
export interface MirrorSpec {
  namespace?: string;
  name?: string;
}

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  type: string;
  status: ConditionStatus;
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

export interface ClusterStatus {
  cluster: string;
  /** Ready, Unreachable, ServiceNotFound, NoAddresses, HeadlessService */
  state: string;
  /** Resolution types that read EndpointSlices: ready endpoints, of totalEndpoints. */
  readyEndpoints?: number;
  totalEndpoints?: number;
  /** Why the cluster is not Ready and what to do, when its state alone does not say. */
  message?: string;
  addresses?: string[];
  lastError?: string;
  /** When the addresses shown were last read from the cluster. */
  lastSeen?: string;
}

/** The mirror in one workload cluster of the namespace. */
export interface MirrorClusterStatus {
  cluster: string;
  /** InPlace, Conflict, NamespaceNotFound, SourceCluster, NoSource, Unreachable, Failed */
  state: string;
  /** "namespace/name" of the mirror Service there. */
  service: string;
  /** Why the mirror is not in place, or what it keeps (last known endpoints of an unreachable source). */
  message?: string;
  /** EndpointSlices of the mirror there, one per source cluster and address family. */
  endpointSlices?: number;
}

export interface GatewayDNSStatus {
  observedGeneration?: number;
  selectedClusters?: number;
  conditions?: Condition[];
  clusters?: ClusterStatus[];
  /** spec.mirror: one entry per workload cluster of the namespace. */
  mirrors?: MirrorClusterStatus[];
}

export interface GatewayDNS {
  apiVersion: typeof API_VERSION;
  kind: typeof GATEWAYDNS_KIND;
  metadata: ObjectMeta;
  spec: GatewayDNSSpec;
  status?: GatewayDNSStatus;
}

const DNS_LABEL = '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$';
const HOSTNAME = '^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\\.)+[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$';
/** A Service name (DNS-1035 label: it must start with a letter). */
const SERVICE_NAME = '^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$';
const LABEL_VALUE = '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$';

/** JSON schema (draft 2020-12 subset ajv understands) of GatewayDNS.spec; mirrors the CRD. */
export const GATEWAYDNS_SPEC_SCHEMA = {
  type: 'object',
  required: ['clusterSelector', 'service'],
  properties: {
    clusterSelector: {
      type: 'object',
      properties: {
        matchLabels: {
          type: 'object',
          additionalProperties: { type: 'string', maxLength: 63, pattern: LABEL_VALUE },
        },
        matchExpressions: {
          type: 'array',
          items: {
            type: 'object',
            required: ['key', 'operator'],
            properties: {
              key: { type: 'string', minLength: 1, maxLength: 317 },
              operator: { type: 'string', enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'] },
              values: { type: 'array', items: { type: 'string', maxLength: 63 } },
            },
          },
        },
      },
    },
    service: {
      type: 'string',
      maxLength: 317,
      pattern: `^${DNS_LABEL.slice(1, -1)}/${DNS_LABEL.slice(1, -1)}$`,
    },
    resolutionType: { type: 'string', enum: [...RESOLUTION_TYPES] },
    answer: { type: 'string', enum: [...ANSWER_POLICIES] },
    hostnames: {
      type: 'array',
      maxItems: 32,
      items: { type: 'string', minLength: 1, maxLength: 253, pattern: HOSTNAME },
    },
    gatewayLabel: { type: 'string', minLength: 1, maxLength: 63, pattern: DNS_LABEL },
    nodeAddressTypes: {
      type: 'array',
      maxItems: 3,
      items: { type: 'string', enum: [...NODE_ADDRESS_TYPES] },
    },
    ttl: { type: 'integer', minimum: 0, maximum: 86400 },
    mirror: {
      type: 'object',
      additionalProperties: false,
      properties: {
        namespace: { type: 'string', minLength: 1, maxLength: 63, pattern: DNS_LABEL },
        name: { type: 'string', minLength: 1, maxLength: 63, pattern: SERVICE_NAME },
      },
    },
  },
} as const;
