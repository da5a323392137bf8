// Condition types and reasons of GatewayDNS status: the one place they are
// spelled. Conditions follow the Kubernetes convention (metav1.Condition):
// lastTransitionTime moves only when the status flips.
import type { Condition, ConditionStatus } from '../../api/index.js';
import { CONDITION_MESSAGE_MAX, truncateText } from '../manager/runtime/summary.js';

export const READY = 'Ready';

export const REASONS = {
  /** Record sets are current in every reachable workload cluster. */
  Ready: 'Ready',
  /** A selected (source) or target workload cluster could not be reached; last known addresses are kept. */
  ClusterUnreachable: 'ClusterUnreachable',
  /** No selected cluster has the Service. */
  ServiceNotFound: 'ServiceNotFound',
  /** The Service exists but no selected cluster gives it an address yet. */
  NoAddresses: 'NoAddresses',
  /** spec.gatewayRef: no selected cluster has the Gateway. */
  GatewayNotFound: 'GatewayNotFound',
  /** spec.gatewayRef: the Gateway exists, but in no selected cluster is it Programmed with an address. */
  GatewayNotProgrammed: 'GatewayNotProgrammed',
  /** resolutionType clusterIP names a headless Service (no cluster IP) in every selected cluster that has it. */
  HeadlessService: 'HeadlessService',
  /** Another GatewayDNS in the namespace, created earlier, already claims some of the names. */
  Conflict: 'Conflict',
  /** The spec fails validation (e.g. stored under an older CRD). */
  Invalid: 'Invalid',
  /** spec.service or spec.mirror.namespace names a workload namespace the management namespace is not granted. */
  NamespaceNotAllowed: 'NamespaceNotAllowed',
  /** The selector matches no Cluster in the namespace. */
  NoClustersSelected: 'NoClustersSelected',
  /** Before the first reconcile. */
  Pending: 'Pending',
} as const;
export type Reason = (typeof REASONS)[keyof typeof REASONS];

/**
 * Whether every custom host name asked for (spec.hostnames, the fqdn annotation) is served; set
 * only while some are asked for. Reasons: Accepted, Conflict (an older GatewayDNS holds one),
 * Invalid (outside the zone, or under the generated names).
 */
export const HOSTNAMES_ACCEPTED = 'HostnamesAccepted';
export const HOSTNAME_REASONS = {
  Accepted: 'Accepted',
  Conflict: 'Conflict',
  Invalid: 'Invalid',
  /** A DNSZone in Enforce delegates the name to no namespace matching the GatewayDNS's (ADR 0213). */
  NotDelegated: 'NotDelegated',
} as const;
export type HostnameReason = (typeof HOSTNAME_REASONS)[keyof typeof HOSTNAME_REASONS];

/**
 * Whether the custom names served are governed by delegations (ADR 0213); set only while some are
 * served. True/Delegated: every one is in a zone with a DNSZone that allows this namespace.
 * False/FirstClaim: some are in a zone declared by flags only, where the oldest claim from any
 * namespace wins (the unsafe mode, made visible). False/Audit: a DNSZone in Audit would withdraw some.
 */
export const NAMES_DELEGATED = 'NamesDelegated';
export const DELEGATION_REASONS = {
  Delegated: 'Delegated',
  FirstClaim: 'FirstClaim',
  Audit: 'Audit',
} as const;
export type DelegationReason = (typeof DELEGATION_REASONS)[keyof typeof DELEGATION_REASONS];

/** A DNSZone's conditions (operator/zones/). */
export const ZONE_CONDITIONS = {
  Ready: 'Ready',
  DelegationsAccepted: 'DelegationsAccepted',
  /** spec.nameservers.expose: whether exposed dns-servers are the zone's NS now (ADR 0215). */
  NameserversExposed: 'NameserversExposed',
  /** spec.dnssec.enabled: whether the zone is signed with the key the DNSZone names (ADR 0106). */
  Signed: 'Signed',
  /** spec.transfer: whether its secondaries and TSIG key are told to the dns-servers (ADR 0216). */
  TransferReady: 'TransferReady',
} as const;
export const ZONE_REASONS = {
  /** The spec is in force and the zone is declared to every reachable workload cluster. */
  Ready: 'Ready',
  /**
   * The spec is refused (not a DNS name, a pattern outside the zone, …): the delegations in force
   * stay. TransferReady: a secondary's address or port is not one; the transfer in force stays.
   */
  Invalid: 'Invalid',
  /** An older DNSZone declares the same zone: it governs, this one does not. */
  DuplicateZone: 'DuplicateZone',
  /** Some workload cluster could not be told to serve the zone. */
  ClusterUnreachable: 'ClusterUnreachable',
  /** Being deleted: what it governed is being withdrawn. */
  Deleting: 'Deleting',
  /** Every delegation is in force. */
  Accepted: 'Accepted',
  /** A delegated pattern is given to other namespaces by an earlier (or serving) delegation, which keeps it. */
  Overlapping: 'Overlapping',
  Pending: 'Pending',
  /** Exposed dns-servers are the zone's NS, with glue (status.nameservers, status.parentRecords). */
  Exposed: 'Exposed',
  /** No cluster serving the zone has an exposed dns-server with an address: the NS set falls back. */
  NoExposedServer: 'NoExposedServer',
  /** The key is read and the dns-servers are told to sign with it (status.ds). */
  KeySigned: 'Signed',
  /** The key Secret, or its "key.pem", is not there: the zone stays served as it was. */
  KeyNotFound: 'KeyNotFound',
  /** The key does not parse, or is of another algorithm: the zone stays served as it was. */
  KeyInvalid: 'KeyInvalid',
  /** The TSIG Secret does not exist (or cannot be read): the transfer in force stays. */
  SecretNotFound: 'SecretNotFound',
  /** The TSIG Secret lacks name, algorithm or secret, or they are not an hmac-sha256 key. */
  SecretInvalid: 'SecretInvalid',
} as const;
export type ZoneReason = (typeof ZONE_REASONS)[keyof typeof ZONE_REASONS];

/**
 * spec.healthCheck: whether the traffic policy answers as it would with every candidate healthy,
 * as the dns-servers' probe reports show it (ADR 0209); set only while a check is asked for.
 */
export const DEGRADED = 'Degraded';

export const DEGRADED_REASONS = {
  /** Every candidate is healthy from every workload cluster that reported. */
  AllHealthy: 'AllHealthy',
  /** Some candidate is unhealthy from some cluster, which still answers from its first tier. */
  Unhealthy: 'Unhealthy',
  /** Some cluster answers from a later tier than its first. */
  FailedOver: 'FailedOver',
  /** Some cluster finds no candidate healthy (whenNoneHealthy decides what it answers). */
  NoneHealthy: 'NoneHealthy',
  /** No dns-server has reported its probes yet. */
  NoReports: 'NoReports',
} as const;
export type DegradedReason = (typeof DEGRADED_REASONS)[keyof typeof DEGRADED_REASONS];

/** spec.mirror: whether the mirror Service and its EndpointSlices are in place in every consuming cluster. */
export const MIRRORED = 'Mirrored';

export const MIRROR_REASONS = {
  /** In place in every workload cluster that has the namespace. */
  InPlace: 'InPlace',
  /** A Service or EndpointSlice name is taken in some cluster by an object capi-dns did not create for this GatewayDNS. */
  Conflict: 'Conflict',
  /** A consuming cluster, or a source cluster, does not answer; what is there (the last known endpoints) stays. */
  ClusterUnreachable: 'ClusterUnreachable',
  /** No selected cluster has the Service. */
  NoSource: 'NoSource',
  /** No workload cluster of the namespace has the mirror's namespace. */
  NoConsumers: 'NoConsumers',
  /** A write was refused (it is retried). */
  Failed: 'Failed',
} as const;
export type MirrorReason = (typeof MIRROR_REASONS)[keyof typeof MIRROR_REASONS];

export interface ConditionInput {
  type: string;
  status: ConditionStatus;
  /** One of a controller's reason constants (REASONS here, mcs/conditions.ts for Multi-Cluster Services). */
  reason: string;
  message: string;
  observedGeneration?: number;
}

/**
 * Returns the conditions with `next` set: the previous lastTransitionTime is
 * kept unless the status changed, so that an unchanged condition compares
 * equal and causes no status write.
 */
export function setCondition(
  existing: Condition[] | undefined,
  next: ConditionInput,
  now: Date,
): Condition[] {
  const list = existing ?? [];
  const previous = list.find((c) => c.type === next.type);
  const lastTransitionTime =
    previous && previous.status === next.status ? previous.lastTransitionTime : now.toISOString();
  // The messages are summaries by construction; the cut is the last guard, so that no message,
  // whatever a cluster's error said, can make the API refuse the whole status patch.
  const condition: Condition = {
    ...next,
    message: truncateText(next.message, CONDITION_MESSAGE_MAX),
    lastTransitionTime,
  };
  return [...list.filter((c) => c.type !== next.type), condition];
}

/** The conditions without the one of this type. */
export function removeCondition(existing: Condition[] | undefined, type: string): Condition[] {
  return (existing ?? []).filter((c) => c.type !== type);
}

/**
 * A condition there only while what it reports is asked for (a DNSZone's spec.dnssec,
 * spec.transfer, spec.nameservers.expose): removed when it is not; left as it was when `next` is
 * undefined (not computed this pass); else set.
 */
export function setConditionWhile(
  existing: Condition[] | undefined,
  asked: boolean,
  type: string,
  next: Omit<ConditionInput, 'type'> | undefined,
  now: Date,
): Condition[] {
  if (!asked) return removeCondition(existing, type);
  if (!next) return existing ?? [];
  return setCondition(existing, { type, ...next }, now);
}
