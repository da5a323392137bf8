// Reads the writes an API server of the test environment logged (testenv
// --audit-writes): who wrote what, when, as the API server saw it, not as the
// writer says it did.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestEnvInfo } from './testenv.js';

export interface AuditedWrite {
  verb: string;
  userAgent: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /** When the API server completed it, in ms since the epoch. */
  at: number;
  code: number;
}

/** Every write the cluster's API server completed so far, in the order it logged them. */
export function auditedWrites(info: TestEnvInfo, cluster: string): AuditedWrite[] {
  const file = path.join(info.dir, cluster, 'audit.log');
  if (!existsSync(file))
    throw new Error(`no audit log for cluster ${cluster}: start the test environment with auditWrites`);
  const out: AuditedWrite[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const e = JSON.parse(line) as {
      verb: string;
      userAgent?: string;
      objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
      stageTimestamp: string;
      responseStatus?: { code?: number };
    };
    out.push({
      verb: e.verb,
      userAgent: e.userAgent ?? '',
      resource: e.objectRef?.resource ?? '',
      ...(e.objectRef?.subresource ? { subresource: e.objectRef.subresource } : {}),
      ...(e.objectRef?.namespace ? { namespace: e.objectRef.namespace } : {}),
      ...(e.objectRef?.name ? { name: e.objectRef.name } : {}),
      at: Date.parse(e.stageTimestamp),
      code: e.responseStatus?.code ?? 0,
    });
  }
  return out;
}
