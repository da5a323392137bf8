// A record set as the plan hands it to the writer: with its content in
// canonical form, computed once and compared in every cluster.
import type { DNSRecordSet } from '../../../api/index.js';
import { canonical } from '../../manager/runtime/equal.js';

/** A record set to write, with its content in canonical form (computed once, compared in every cluster). */
export interface DesiredRecordSet {
  set: DNSRecordSet;
  content: string;
}

export function desiredRecordSet(set: DNSRecordSet): DesiredRecordSet {
  return { set, content: contentOf(set) };
}

export function contentOf(set: Pick<DNSRecordSet, 'metadata' | 'spec'>): string {
  return canonical({ labels: set.metadata?.labels, records: set.spec?.records });
}
