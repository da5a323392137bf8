// Keeps a desired DNSRecordSet inside its two limits (a record's number of
// values is not capped): a record's answer must fit a DNS message over TCP,
// and the object must fit etcd. What does not fit is left
// out in a fixed order and named, so that status can say so; nothing is cut
// silently.
import {
  MAX_ANSWER_OCTETS,
  MAX_RECORDSET_JSON_OCTETS,
  valueWireOctets,
  type DNSRecord,
  type DNSRecordSet,
} from '../../../api/index.js';
import { mergeRecords } from './desired.js';

export interface Omission {
  name: string;
  type: string;
  /** Values published, of `total`; 0 when the whole record was left out. */
  kept: number;
  total: number;
  reason: 'answer larger than a DNS message' | 'record set larger than etcd allows';
}

export interface FittedRecordSet {
  set: DNSRecordSet;
  omitted: Omission[];
}

export function fitRecordSet(
  set: DNSRecordSet,
  limits = { answerOctets: MAX_ANSWER_OCTETS, jsonOctets: MAX_RECORDSET_JSON_OCTETS },
): FittedRecordSet {
  const omitted: Omission[] = [];
  const records = set.spec.records.map((r) => {
    const fitted = fitAnswer(r, limits.answerOctets);
    if (fitted.values.length < r.values.length) omitted.push(answerOmission(r, fitted));
    return fitted;
  });
  let size = jsonOctets({ ...set, spec: { records } });
  if (size <= limits.jsonOctets) return { set: { ...set, spec: { records } }, omitted };
  // Least needed first: per-pod names, then SRV records, then the names every client uses.
  const names = new Set(records.map((r) => r.name));
  const dropOrder = records
    .map((r, index) => ({ r, index, rank: rankOf(r, names) }))
    .sort((a, b) => b.rank - a.rank || b.index - a.index);
  const dropped = new Set<number>();
  for (const { r, index } of dropOrder) {
    if (size <= limits.jsonOctets) break;
    dropped.add(index);
    size -= jsonOctets(r) + 1;
    omitted.push({
      name: r.name,
      type: r.type,
      kept: 0,
      total: r.values.length,
      reason: 'record set larger than etcd allows',
    });
  }
  return { set: { ...set, spec: { records: records.filter((_, i) => !dropped.has(i)) } }, omitted };
}

/**
 * The shards of one GatewayDNS: the answer limit applies to what a dns-server
 * serves, the merge of every shard's values for a name and type, so it is
 * checked on that merge and the values left out are left out of every shard;
 * the etcd limit applies to each object on its own.
 */
export function fitRecordSets(
  sets: DNSRecordSet[],
  limits = { answerOctets: MAX_ANSWER_OCTETS, jsonOctets: MAX_RECORDSET_JSON_OCTETS },
): { sets: DNSRecordSet[]; omitted: Omission[] } {
  const omitted: Omission[] = [];
  /** Per trimmed "name/type", the values that are kept. */
  const keptValues = new Map<string, Set<string>>();
  for (const r of mergeRecords(sets.map((s) => s.spec.records))) {
    const fitted = fitAnswer(r, limits.answerOctets);
    if (fitted.values.length === r.values.length) continue;
    keptValues.set(`${r.name}/${r.type}`, new Set(fitted.values));
    omitted.push(answerOmission(r, fitted));
  }
  const out = sets.map((set) => {
    const records = keptValues.size
      ? set.spec.records.flatMap((r) => {
          const kept = keptValues.get(`${r.name}/${r.type}`);
          if (!kept) return [r];
          const values = r.values.filter((v) => kept.has(v));
          return values.length ? [{ ...r, values }] : [];
        })
      : set.spec.records;
    const fitted = fitRecordSet({ ...set, spec: { records } }, limits);
    // A loop, not push(...): a huge Service can leave out more records than call arguments may be.
    for (const o of fitted.omitted) omitted.push(o);
    return fitted.set;
  });
  return { sets: out.filter((s) => s.spec.records.length > 0), omitted };
}

function answerOmission(record: DNSRecord, fitted: DNSRecord): Omission {
  return {
    name: record.name,
    type: record.type,
    kept: fitted.values.length,
    total: record.values.length,
    reason: 'answer larger than a DNS message',
  };
}

/** The first values (they are sorted) whose answer fits; RFC 2181 section 5 wants whole RRsets, so this is reported. */
function fitAnswer(record: DNSRecord, limit: number): DNSRecord {
  let octets = 0;
  let count = 0;
  for (const v of record.values) {
    octets += valueWireOctets(record.type, v);
    if (octets > limit) break;
    count++;
  }
  return count === record.values.length ? record : { ...record, values: record.values.slice(0, count) };
}

/**
 * 0: wildcard address records (what clients resolve); 1: the domains themselves;
 * 2: SRV; 3: per-pod names, recognised as names whose parent has records too.
 */
function rankOf(r: DNSRecord, names: Set<string>): number {
  if (r.name.startsWith('*.')) return 0;
  if (r.type === 'SRV') return 2;
  return names.has(r.name.slice(r.name.indexOf('.') + 1)) ? 3 : 1;
}

function jsonOctets(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}
