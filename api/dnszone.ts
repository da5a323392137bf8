// DNSZone: a zone the fleet serves, declared once on the management cluster
// (cluster-scoped, written by platform admins), and which management
// namespaces may use which custom names in it. The CRD is
// crds/connectivity.tanzu.vmware.com_dnszones.yaml; its spec schema is
// api/generated/dnszone-spec-schema.ts. ADR 0213.
import type { ObjectMeta } from './dnsrecordset.js';
import type { Condition, LabelSelector } from './gatewaydns.js';
import type { SoaParameters } from './zone-declaration.js';
import { DNSZONE_CRD_SPEC_SCHEMA } from './generated/dnszone-spec-schema.js';

const FIELDS = DNSZONE_CRD_SPEC_SCHEMA.properties;

export const DNSZONE_KIND = 'DNSZone';
export const DNSZONE_PLURAL = 'dnszones';
/** Holds a DNSZone until what it governed is withdrawn and its zone is no longer declared to the dns-servers. */
export const DNSZONE_FINALIZER = 'connectivity.tanzu.vmware.com/dnszone';

export const ENFORCEMENTS = FIELDS.enforcement.enum;
/** Enforce: names outside the delegations are not served. Audit: they are, and status lists them. */
export type Enforcement = (typeof ENFORCEMENTS)[number];
export const DEFAULT_ENFORCEMENT: Enforcement = FIELDS.enforcement.default;

export const DNSSEC_ALGORITHMS = FIELDS.dnssec.properties.algorithm.enum;
/** The algorithm of a key the operator generates (ADR 0106): ECDSA P-256 (13) or Ed25519 (15). */
export type DnssecAlgorithm = (typeof DNSSEC_ALGORITHMS)[number];
export const DEFAULT_DNSSEC_ALGORITHM: DnssecAlgorithm = FIELDS.dnssec.properties.algorithm.default;
/** The data key of a zone's key Secret on the management cluster (generated or named): PKCS#8 PEM. */
export const DNSSEC_KEY_DATA = 'key.pem';
/** On the key Secrets the operator generates: the DNSZone they sign. */
export const DNSSEC_KEY_LABEL = 'connectivity.tanzu.vmware.com/dnszone';

export interface DnssecSpec {
  enabled?: boolean;
  algorithm?: DnssecAlgorithm;
  /** A Secret on the management cluster with the private key under "key.pem"; generated when unset. */
  keySecretRef?: { namespace: string; name: string };
}

export interface Delegation {
  /** Management namespaces by name. */
  namespaces?: string[];
  /** Management namespaces by label. */
  namespaceSelector?: LabelSelector;
  /** "shop.apps.corp.internal", or "*.shop.apps.corp.internal": every name below, not the name itself. */
  hostnames: string[];
}

export interface DNSZoneSpec {
  zone: string;
  enforcement?: Enforcement;
  /** SOA parameters every dns-server serves the zone with; unset ones are each dns-server's own. */
  soa?: SoaParameters;
  /**
   * The zone's NS records; each dns-server's --ns (or the SOA MNAME) when unset. Kept for
   * DNSZones written before spec.nameservers; setting both is refused (ADR 0215).
   */
  nameServers?: string[];
  /** Who the zone's name servers are: the exposed dns-servers, names of their own, or both (ADR 0215). */
  nameservers?: NameserversSpec;
  /** Zone transfer (AXFR, IXFR, NOTIFY) to secondaries of their own, signed with TSIG (ADR 0216). */
  transfer?: TransferSpec;
  delegations?: Delegation[];
  /** Signed (ADR 0106). */
  dnssec?: DnssecSpec;
}

export interface TransferSpec {
  /** Sent NOTIFY, and the only clients allowed to transfer the zone. */
  secondaries: { address: string; port?: number }[];
  /**
   * A Secret on the management cluster with the data keys `name`, `algorithm` (hmac-sha256) and
   * `secret` (base64), as tsig-keygen writes them.
   */
  tsigSecretRef: { namespace: string; name: string };
}

export interface NameserversSpec {
  /** The exposed dns-servers (Service capi-dns-server-external) of the clusters serving the zone are its NS. */
  expose?: boolean;
  /** Name servers of their own (a company's secondaries), beside the exposed ones or instead of --ns. */
  names?: string[];
}

/** One exposed dns-server serving the zone: the NS record and glue the parent zone needs for it. */
export interface ZoneNameserver {
  /** The workload cluster, "namespace/name". */
  cluster: string;
  /** Its NS name (`<cluster>.<namespace>.ns.<zone>`, ADR 0215). */
  name: string;
  /** Its glue: the exposed Service's load-balancer addresses. */
  addresses: string[];
  /** The SOA serial it serves, once its dns-server reports one. */
  serial?: number;
}

/** The delegations in force: the last spec accepted, less the delegations refused. */
export interface EnforcedZone {
  generation?: number;
  zone: string;
  soa?: SoaParameters;
  nameServers?: string[];
  /** spec.nameservers.expose as accepted. */
  expose?: boolean;
  /** spec.transfer as last accepted (its Secret read and valid); kept while a later one is refused. */
  transfer?: TransferSpec;
  enforcement: Enforcement;
  delegations: Delegation[];
}

export interface DNSZoneStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  enforced?: EnforcedZone;
  /** Which namespaces serve which custom names of the zone. */
  holders?: { namespace: string; hostnames: string[] }[];
  /** Audit: the served names Enforce would withdraw. */
  audit?: { hostname: string; gatewayDNS: string; message: string }[];
  /** Per workload cluster ("namespace/name"): whether its dns-server is told to serve the zone. */
  clusters?: { cluster: string; served: boolean; message?: string }[];
  /** With spec.nameservers.expose: the exposed dns-servers that are the zone's NS now. */
  nameservers?: ZoneNameserver[];
  /** With spec.nameservers.expose: each namespace part's zone cut and the name servers it is delegated to. */
  zoneCuts?: { name: string; nameServers: string[] }[];
  /** With spec.nameservers.expose: the NS and glue records (and DS, once signed) for the parent zone, ready to paste. */
  parentRecords?: string[];
  /** With spec.dnssec.enabled: the DS of the signing key for the parent, "<key tag> <alg> 2 <digest>". */
  ds?: string[];
}

export interface DNSZone {
  apiVersion?: string;
  kind?: typeof DNSZONE_KIND;
  metadata: ObjectMeta;
  spec: DNSZoneSpec;
  status?: DNSZoneStatus;
}
