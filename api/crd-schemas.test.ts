// The schemas in api/generated/ are the CRDs' (npm run lint runs scripts/crd-schemas.ts --check).
// What remains written by hand is held to them here: the TypeScript interfaces (at compile time:
// tsc in npm run lint, and ts-jest) and what ajv makes of the schema.
import { describe, expect, it } from '@jest/globals';
import { Ajv } from 'ajv';
import { DEFAULT_TTL, type DNSRecord, type DNSRecordSetSpec } from './dnsrecordset.js';
import {
  GATEWAYDNS_SPEC_SCHEMA,
  type GatewayDNSSpec,
  type LabelSelector,
  type LabelSelectorRequirement,
  type MirrorSpec,
} from './gatewaydns.js';
import { DNSRECORDSET_CRD_SPEC_SCHEMA } from './generated/dnsrecordset-spec-schema.js';

/** true when A and B are the same union (of field names). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** The fields of T that are not optional. */
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
/** An object schema's `required`, as a union (never when it has none). */
type RequiredOf<S> = S extends { required: readonly (infer R)[] } ? R : never;
/** The interface has exactly the schema's fields, and requires exactly what it requires. */
type Matches<T, S extends { properties: object }> =
  Same<keyof T, keyof S['properties']> extends true ? Same<RequiredKeys<T>, RequiredOf<S>> : false;

const GATEWAYDNS = GATEWAYDNS_SPEC_SCHEMA.properties;
type Selector = typeof GATEWAYDNS.clusterSelector;
type Records = typeof DNSRECORDSET_CRD_SPEC_SCHEMA.properties.records;

describe('the hand-written API types are the CRDs', () => {
  it('field by field, required or optional', () => {
    const matches: [
      Matches<GatewayDNSSpec, typeof GATEWAYDNS_SPEC_SCHEMA>,
      Matches<LabelSelector, Selector>,
      Matches<LabelSelectorRequirement, Selector['properties']['matchExpressions']['items']>,
      Matches<MirrorSpec, typeof GATEWAYDNS.mirror>,
      Matches<DNSRecordSetSpec, typeof DNSRECORDSET_CRD_SPEC_SCHEMA>,
      Matches<DNSRecord, Records['items']>,
    ] = [true, true, true, true, true, true];
    expect(matches.every(Boolean)).toBe(true);
  });

  it("GatewayDNS's spec.ttl defaults to a record's default TTL, which the operator fills in for both", () => {
    expect(GATEWAYDNS.ttl.default).toBe(DEFAULT_TTL);
  });
});

describe('GATEWAYDNS_SPEC_SCHEMA', () => {
  it('holds only keywords ajv enforces or knows as annotations (strict mode refuses any other)', () => {
    expect(() => new Ajv({ strict: true }).compile(GATEWAYDNS_SPEC_SCHEMA)).not.toThrow();
  });

  it('is the CRD’s, with unknown spec.mirror fields refused', () => {
    const validate = new Ajv({ allErrors: true, strict: false }).compile(GATEWAYDNS_SPEC_SCHEMA);
    const base = { clusterSelector: {}, service: 'apps/db' };
    expect(validate({ ...base, mirror: { namespace: 'shop', name: 'db' } })).toBe(true);
    expect(validate({ ...base, mirror: { service: 'db' } })).toBe(false);
    expect(validate({ ...base, ttl: 86401 })).toBe(false);
    expect(validate({ ...base, hostnames: ['Db.xcc.test'] })).toBe(false);
  });
});
