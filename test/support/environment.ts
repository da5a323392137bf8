// What jest workers know of the shared test environment started by
// global-setup.ts, passed through the process environment.
import type { TestEnvInfo } from './testenv.js';

export const ENV_VAR = 'CAPI_DNS_TESTENV';
/** The management namespace that the global setup registers every workload cluster in. */
export const DEV_TEAM = 'dev-team';
export const WORKLOAD_CLUSTERS = ['cluster-a', 'cluster-b'];

export function testEnvInfo(): TestEnvInfo {
  const raw = process.env[ENV_VAR];
  if (!raw)
    throw new Error(`${ENV_VAR} is not set: integration tests run under jest's "integration" project`);
  return JSON.parse(raw) as TestEnvInfo;
}
