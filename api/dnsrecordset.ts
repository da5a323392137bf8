// The record contract between the operator (writer) and the dns-server
// (reader): DNSRecordSet objects in each workload cluster. The CRD schema is
// crds/connectivity.tanzu.vmware.com_dnsrecordsets.yaml; the record types and
// the default TTL are read from it (api/generated/, see scripts/crd-schemas.ts).
import { DNSRECORDSET_CRD_SPEC_SCHEMA } from './generated/dnsrecordset-spec-schema.js';
import type { RecordPolicy } from './traffic-policy.js';

const RECORD_FIELDS = DNSRECORDSET_CRD_SPEC_SCHEMA.properties.records.items.properties;

export const GROUP = 'connectivity.tanzu.vmware.com';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

export const DNSRECORDSET_KIND = 'DNSRecordSet';
export const DNSRECORDSET_PLURAL = 'dnsrecordsets';
/** Namespace of the record sets in a workload cluster, unless configured otherwise. */
export const DEFAULT_RECORDS_NAMESPACE = 'capi-dns';
/** The zone served, and the suffix of generated names, unless configured otherwise. */
export const DEFAULT_ZONE = 'xcc.test';
/** A record's TTL when it has none; GatewayDNS's spec.ttl has the same default. */
export const DEFAULT_TTL: number = RECORD_FIELDS.ttl.default;

export const RECORD_TYPES = RECORD_FIELDS.type.enum;
export type RecordType = (typeof RECORD_TYPES)[number];

export interface DNSRecord {
  /** Absolute owner name, with or without the final dot; may start with "*." */
  name: string;
  type: RecordType;
  /** Seconds; DEFAULT_TTL when absent. */
  ttl?: number;
  /** A/AAAA: addresses; CNAME: one target; SRV: "priority weight port target"; TXT: text. */
  values: string[];
  /** Traffic policy: these values are one candidate of the name's answer (api/traffic-policy.ts). */
  policy?: RecordPolicy;
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
