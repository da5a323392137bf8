// Large zones as DNSRecordSets in a real API server, for the memory bench and
// the real-pods test: generated the way bench/dns-load.ts's workload is, put
// in 500 records to a set, labelled so that they can be removed at once.
import type { CustomObjectsApi } from '@kubernetes/client-node';
import {
  DEFAULT_RECORDS_NAMESPACE,
  DNSRECORDSET_PLURAL,
  GROUP,
  VERSION,
  type DNSRecordSet,
} from '../../api/index.js';
import { asRecordSets, generateZone } from './dnszone.js';

export const GENERATED_LABEL = 'capi-dns.test/generated';

const base = {
  group: GROUP,
  version: VERSION,
  namespace: DEFAULT_RECORDS_NAMESPACE,
  plural: DNSRECORDSET_PLURAL,
};

/** About `wanted` records of zone xcc.test, as labelled DNSRecordSets of 500 records each. */
export function generatedSets(wanted: number): { sets: DNSRecordSet[]; records: number } {
  // bench/dns-load.ts's proportions: about 1.53 records per host and 2.45 per gateway.
  const gateways = Math.max(10, Math.round(wanted / 50));
  const hosts = Math.max(10, Math.round((wanted - gateways * 2.45) / 1.533));
  const zone = generateZone({ hosts, gateways }, 'xcc.test');
  const records = zone.records.reduce((n, r) => n + r.values.length, 0);
  const sets = asRecordSets(zone.records, 500).map((s) => ({
    ...s,
    metadata: { ...s.metadata, labels: { [GENERATED_LABEL]: 'true' } },
  }));
  return { sets, records };
}

/** Creates or replaces `sets` in the records namespace, and deletes the generated sets beyond them. */
export async function putGeneratedSets(api: CustomObjectsApi, sets: DNSRecordSet[]): Promise<void> {
  const existing = (await api.listNamespacedCustomObject({
    ...base,
    labelSelector: GENERATED_LABEL,
  })) as { items: DNSRecordSet[] };
  const had = new Map(existing.items.map((s) => [s.metadata.name, s.metadata.resourceVersion]));
  for (const s of sets) {
    const rv = had.get(s.metadata.name);
    if (rv === undefined) await api.createNamespacedCustomObject({ ...base, body: s });
    else
      await api.replaceNamespacedCustomObject({
        ...base,
        name: s.metadata.name,
        body: { ...s, metadata: { ...s.metadata, resourceVersion: rv } },
      });
    had.delete(s.metadata.name);
  }
  for (const name of had.keys()) await api.deleteNamespacedCustomObject({ ...base, name });
}

/** Gives the first A record of set `name` the one address `value` (a change every server must rebuild for). */
export async function changeFirstRecord(api: CustomObjectsApi, name: string, value: string): Promise<string> {
  const set = (await api.getNamespacedCustomObject({ ...base, name })) as DNSRecordSet;
  const first = set.spec.records.find((r) => r.type === 'A' && !r.name.startsWith('*'));
  if (!first) throw new Error(`DNSRecordSet ${name} has no A record`);
  first.values = [value];
  await api.replaceNamespacedCustomObject({ ...base, name, body: set });
  return first.name;
}

export async function deleteGeneratedSets(api: CustomObjectsApi): Promise<void> {
  await api.deleteCollectionNamespacedCustomObject({ ...base, labelSelector: GENERATED_LABEL });
}
