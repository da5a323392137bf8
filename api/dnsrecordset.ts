// The record contract between the operator (writer) and the dns-server
// (reader): DNSRecordSet objects in each workload cluster. The CRD schema is
// crds/connectivity.tanzu.vmware.com_dnsrecordsets.yaml.

export const GROUP = 'connectivity.tanzu.vmware.com';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

export const DNSRECORDSET_KIND = 'DNSRecordSet';
export const DNSRECORDSET_PLURAL = 'dnsrecordsets';
/** Namespace of the record sets in a workload cluster, unless configured otherwise. */
export const DEFAULT_RECORDS_NAMESPACE = 'capi-dns';
/** The zone served, and the suffix of generated names, unless configured otherwise. */
export const DEFAULT_ZONE = 'xcc.test';
export const DEFAULT_TTL = 30;

export const RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'SRV', 'TXT'] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

export interface DNSRecord {
  /** Absolute owner name, with or without the final dot; may start with "*." */
  name: string;
  type: RecordType;
  /** Seconds; DEFAULT_TTL when absent. */
  ttl?: number;
  /** A/AAAA: addresses; CNAME: one target; SRV: "priority weight port target"; TXT: text. */
  values: string[];
}

export interface DNSRecordSetSpec {
  records: DNSRecord[];
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  resourceVersion?: string;
  generation?: number;
  uid?: string;
  creationTimestamp?: string | Date;
  deletionTimestamp?: string | Date;
  finalizers?: string[];
}

export interface DNSRecordSet {
  apiVersion: typeof API_VERSION;
  kind: typeof DNSRECORDSET_KIND;
  metadata: ObjectMeta;
  spec: DNSRecordSetSpec;
}
