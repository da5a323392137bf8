// Helpers shared by the unit tests of zone/, wire/ and store/ (not a test file
// itself). Named *.test-support.ts so that tsconfig.build.json leaves it out of
// dist/ and the images.
import type { DNSRecord, DNSRecordSet, HealthCheck } from '../../api/index.js';
import { compileZones, type SourcedRecordSet, type ZoneConfig } from './compile.js';

export function zoneConfig(name = 'xcc.test', overrides: Partial<ZoneConfig> = {}): ZoneConfig {
  return {
    name,
    mname: `ns1.${name}`,
    rname: `hostmaster.${name}`,
    nameServers: [`ns1.${name}`],
    ttl: 30,
    refresh: 3600,
    retry: 600,
    expire: 86400,
    minimum: 10,
    ...overrides,
  };
}

export function recordSet(name: string, records: DNSRecord[]): DNSRecordSet {
  return {
    apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
    kind: 'DNSRecordSet',
    metadata: { name, namespace: 'capi-dns' },
    spec: { records },
  };
}

export function sourced(...sets: DNSRecordSet[]): SourcedRecordSet[] {
  return sets.map((set) => ({ source: `test:${set.metadata.name}`, set }));
}

/** The zone of the lookup tables: wildcards, empty non-terminals, CNAME chains, SRV, TXT. */
export const EXAMPLE_RECORDS: DNSRecord[] = [
  { name: 'a.xcc.test', type: 'A', values: ['10.0.0.1', '10.0.0.2'] },
  { name: 'a.xcc.test', type: 'AAAA', ttl: 60, values: ['fd00::1'] },
  { name: '*.gateway.cluster-a.dev-team.clusters.xcc.test', type: 'A', values: ['10.0.0.5', '10.0.0.6'] },
  { name: 'blocked.gateway.cluster-a.dev-team.clusters.xcc.test', type: 'TXT', values: ['here'] },
  { name: 'www.xcc.test', type: 'CNAME', values: ['a.xcc.test'] },
  { name: 'chain.xcc.test', type: 'CNAME', values: ['www.xcc.test.'] },
  { name: 'dangling.xcc.test', type: 'CNAME', values: ['missing.xcc.test'] },
  { name: 'outside.xcc.test', type: 'CNAME', values: ['example.com'] },
  { name: 'loop1.xcc.test', type: 'CNAME', values: ['loop2.xcc.test'] },
  { name: 'loop2.xcc.test', type: 'CNAME', values: ['loop1.xcc.test'] },
  { name: '_http._tcp.svc.xcc.test', type: 'SRV', values: ['0 5 8080 a.xcc.test'] },
  { name: 'deep.x.y.z.xcc.test', type: 'TXT', values: ['deep'] },
  { name: '*.wild.xcc.test', type: 'CNAME', values: ['a.xcc.test'] },
];

export function exampleZones() {
  return compileZones(sourced(recordSet('example', EXAMPLE_RECORDS)), [zoneConfig()], 7);
}

/** A traffic policy's HTTP check, as the operator would publish one (zone/policy.ts, wire/ draws). */
export const HTTP_CHECK: HealthCheck = {
  protocol: 'HTTP',
  port: 8080,
  path: '/healthz',
  periodSeconds: 2,
  timeoutSeconds: 1,
  failureThreshold: 2,
  successThreshold: 2,
};
