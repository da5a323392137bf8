// GatewayDNS: the management-cluster object that capi-dns-controller turns
// into DNSRecordSets in workload clusters. The CRD is
// crds/connectivity.tanzu.vmware.com_gatewaydns.yaml, the one source of the
// spec's schema: api/generated/ holds it as a constant (scripts/crd-schemas.ts,
// checked by npm run lint), and the enums and defaults below are read from it.
import { API_VERSION, type ObjectMeta } from './dnsrecordset.js';
import { GATEWAYDNS_CRD_SPEC_SCHEMA } from './generated/gatewaydns-spec-schema.js';
import type { HealthCheckSpec, WhenNoneHealthy } from './traffic-policy.js';

const FIELDS = GATEWAYDNS_CRD_SPEC_SCHEMA.properties;

export const GATEWAYDNS_KIND = 'GatewayDNS';
export const GATEWAYDNS_PLURAL = 'gatewaydns';
/** Holds a GatewayDNS until its record sets are withdrawn from every workload cluster. */
export const GATEWAYDNS_FINALIZER = 'connectivity.tanzu.vmware.com/gatewaydns';

/**
 * loadBalancer, nodePort: the Service's gateway addresses. clusterIP: its
 * cluster IPs, for networks where service CIDRs route between clusters.
 * headless: its ready pod addresses from EndpointSlices, for routable pod networks.
 */
export const RESOLUTION_TYPES = FIELDS.resolutionType.enum;
export type ResolutionType = (typeof RESOLUTION_TYPES)[number];
export const NODE_ADDRESS_TYPES = FIELDS.nodeAddressTypes.items.enum;
export type NodeAddressType = (typeof NODE_ADDRESS_TYPES)[number];

/**
 * How the cluster-independent name answers in each workload cluster. all: every
 * selected cluster's addresses. localFirst: a selected cluster with ready
 * addresses gets its own; the others, and one with none ready, get the union
 * (or the first failover tier that has any). failover: the first tier of
 * spec.failover with a ready and healthy cluster (api/traffic-policy.ts).
 */
export const ANSWER_POLICIES = FIELDS.answer.enum;
export type AnswerPolicy = (typeof ANSWER_POLICIES)[number];

/** The CRD's defaults, which the API server fills in; the operator fills them in too, for objects stored before one existed. */
export const DEFAULT_ANSWER_POLICY: AnswerPolicy = FIELDS.answer.default;
export const DEFAULT_GATEWAY_LABEL: string = FIELDS.gatewayLabel.default;
export const DEFAULT_RESOLUTION_TYPE: ResolutionType = FIELDS.resolutionType.default;
export const DEFAULT_NODE_ADDRESS_TYPES: NodeAddressType[] = [...FIELDS.nodeAddressTypes.default];

export const LABEL_SELECTOR_OPERATORS =
  FIELDS.clusterSelector.properties.matchExpressions.items.properties.operator.enum;

export interface LabelSelectorRequirement {
  key: string;
  operator: (typeof LABEL_SELECTOR_OPERATORS)[number];
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** spec.failover: one tier, the Clusters its selector matches among the selected ones. */
export interface FailoverTier {
  clusterSelector: LabelSelector;
}

/** spec.weights: the share of answers of the Clusters its selector matches. */
export interface ClusterWeight {
  clusterSelector: LabelSelector;
  weight: number;
}

export interface GatewayDNSSpec {
  clusterSelector: LabelSelector;
  /** "namespace/name" of the Service in each selected workload cluster (or spec.gatewayRef). */
  service?: string;
  /** A Gateway API Gateway in each selected workload cluster (or spec.service). */
  gatewayRef?: GatewayRef;
  resolutionType?: ResolutionType;
  answer?: AnswerPolicy;
  /** Names inside the zone that answer like the cluster-independent name. */
  hostnames?: string[];
  gatewayLabel?: string;
  nodeAddressTypes?: NodeAddressType[];
  ttl?: number;
  /** Also keep the Service as a local Service with EndpointSlices in every workload cluster of the namespace. */
  mirror?: MirrorSpec;
  /** Ordered failover tiers (answer failover or localFirst). */
  failover?: FailoverTier[];
  /** The share of answers of each cluster among those of the tier that answers. */
  weights?: ClusterWeight[];
  /** Probes of the published addresses, from every workload cluster's dns-server. */
  healthCheck?: HealthCheckSpec;
  whenNoneHealthy?: WhenNoneHealthy;
}

/** spec.gatewayRef: a gateway.networking.k8s.io/v1 Gateway, by namespace and name. */
export interface GatewayRef {
  namespace: string;
  name: string;
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
  /** Ready, Unreachable, ServiceNotFound, NoAddresses, HeadlessService, GatewayNotFound, GatewayNotProgrammed */
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
  /** spec.healthCheck: how the workload clusters' dns-servers find it (their probe reports). */
  health?: ClusterHealthStatus;
}

export interface ClusterHealthStatus {
  /** Reporting workload clusters from which it is healthy. */
  healthyFrom: number;
  /** Workload clusters whose dns-servers have reported their probes. */
  reportingClusters: number;
  /** The first few clusters from which it is unhealthy (reportingClusters − healthyFrom in all). */
  unhealthyFrom?: string[];
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
  /** The custom host names served (spec.hostnames, fqdn annotations, route host names): what DNSZones read. */
  hostnames?: string[];
}

export interface GatewayDNS {
  apiVersion: typeof API_VERSION;
  kind: typeof GATEWAYDNS_KIND;
  metadata: ObjectMeta;
  spec: GatewayDNSSpec;
  status?: GatewayDNSStatus;
}

/**
 * JSON schema of GatewayDNS.spec for ajv (operator/model/validate.ts): the CRD's, which objects
 * stored under an older CRD (or written before a field got stricter) may not meet.
 *
 * One addition: spec.mirror refuses fields other than namespace and name, so that a misspelt one
 * is reported rather than ignored. The CRD cannot say so (the API server forbids
 * additionalProperties beside properties); it prunes unknown fields instead, or refuses them
 * under strict field validation (kubectl's default), so no object it serves has one.
 */
export const GATEWAYDNS_SPEC_SCHEMA = {
  ...GATEWAYDNS_CRD_SPEC_SCHEMA,
  properties: {
    ...FIELDS,
    mirror: { ...FIELDS.mirror, additionalProperties: false },
  },
} as const;
