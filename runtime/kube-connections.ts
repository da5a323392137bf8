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
// The same pools can name the process in every request's User-Agent (client-node
// sends its own, the same for every replica): an API server's audit log then
// tells which replica of several wrote what.
import { createHash } from 'node:crypto';
import type { Cluster, KubeConfig } from '@kubernetes/client-node';
import type { AgentOptions } from 'node:https';

type CreateDispatcher = (cluster: Cluster | null, agentOptions: AgentOptions) => unknown;

/** The private method wrapped; client-node declares it private, so it is reached through this view. */
interface DispatcherFactory {
  createDispatcher?: CreateDispatcher;
}

/** What undici's dispatch receives as headers: an object, or name/value pairs (flat or nested). */
type DispatchHeaders =
  Record<string, string | string[] | undefined> | (string | string[])[] | null | undefined;

interface Dispatcher {
  dispatch(opts: { headers?: DispatchHeaders }, handler: unknown): boolean;
  compose(interceptor: (dispatch: Dispatcher['dispatch']) => Dispatcher['dispatch']): unknown;
}

/** `headers` with the User-Agent replaced by `userAgent`, whatever shape undici gave them in. */
export function withUserAgent(headers: DispatchHeaders, userAgent: string): DispatchHeaders {
  const isAgent = (name: unknown) => typeof name === 'string' && name.toLowerCase() === 'user-agent';
  if (!headers) return { 'user-agent': userAgent };
  if (!Array.isArray(headers)) {
    const out: Record<string, string | string[] | undefined> = {};
    for (const [name, value] of Object.entries(headers)) if (!isAgent(name)) out[name] = value;
    out['user-agent'] = userAgent;
    return out;
  }
  if (headers.length && Array.isArray(headers[0])) {
    const pairs = (headers as string[][]).filter(([name]) => !isAgent(name));
    return [...pairs, ['user-agent', userAgent]];
  }
  const flat: string[] = [];
  for (let i = 0; i + 1 < headers.length; i += 2)
    if (!isAgent(headers[i])) flat.push(headers[i] as string, headers[i + 1] as string);
  return [...flat, 'user-agent', userAgent];
}

/**
 * Makes every API client of `kc` share connections, and send `userAgent` when given; false when
 * this client-node has no such method to wrap.
 */
export function reuseConnections(kc: KubeConfig, opts: { userAgent?: string } = {}): boolean {
  const internals = kc as unknown as DispatcherFactory;
  const original = internals.createDispatcher;
  if (typeof original !== 'function') return false;
  const pools = new Map<string, unknown>();
  internals.createDispatcher = (cluster, agentOptions) => {
    // The options hold the credentials themselves, so a changed certificate gets a new pool.
    const key = createHash('sha256')
      .update(JSON.stringify(kc.createDispatcherOptions(cluster, agentOptions)))
      .digest('hex');
    if (!pools.has(key)) {
      const agent = original.call(kc, cluster, agentOptions) as Dispatcher | undefined;
      const { userAgent } = opts;
      pools.set(
        key,
        userAgent && agent && typeof agent.compose === 'function'
          ? agent.compose(
              (dispatch) => (request, handler) =>
                dispatch({ ...request, headers: withUserAgent(request.headers, userAgent) }, handler),
            )
          : agent,
      );
    }
    return pools.get(key);
  };
  return true;
}
