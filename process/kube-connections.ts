// One connection pool per KubeConfig. @kubernetes/client-node 2.0 builds a new
// undici Agent for every API request (KubeConfig.applySecurityAuthentication
// calls createDispatcher, which, unlike createAgent for watches, caches
// nothing), so every request opened its own TCP connection and TLS handshake:
// 50 sequential requests opened 50 connections, about 39 ms each on the test
// machine. The operator writes to every workload cluster on every change, so
// that cost sat on its hot path. Here createDispatcher is wrapped to hand out
// one Agent per distinct set of connection options (CA, client certificate,
// server name...), which keeps connections alive across requests.
// test/integration/kube-connections.test.ts checks the effect against a real
// API server, so a client-node upgrade that changes this internal is noticed.
import { createHash } from 'node:crypto';
import type { Cluster, KubeConfig } from '@kubernetes/client-node';
import type { AgentOptions } from 'node:https';

type CreateDispatcher = (cluster: Cluster | null, agentOptions: AgentOptions) => unknown;

/** The private method wrapped; client-node declares it private, so it is reached through this view. */
interface DispatcherFactory {
  createDispatcher?: CreateDispatcher;
}

/** Makes every API client of `kc` share connections; false when this client-node has no such method to wrap. */
export function reuseConnections(kc: KubeConfig): boolean {
  const internals = kc as unknown as DispatcherFactory;
  const original = internals.createDispatcher;
  if (typeof original !== 'function') return false;
  const pools = new Map<string, unknown>();
  internals.createDispatcher = (cluster, agentOptions) => {
    // The options hold the credentials themselves, so a changed certificate gets a new pool.
    const key = createHash('sha256')
      .update(JSON.stringify(kc.createDispatcherOptions(cluster, agentOptions)))
      .digest('hex');
    if (!pools.has(key)) pools.set(key, original.call(kc, cluster, agentOptions));
    return pools.get(key);
  };
  return true;
}
