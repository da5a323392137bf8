// runtime/kube-connections.ts against a real API server: API clients of one
// KubeConfig share kept-alive connections instead of opening one per request
// (what @kubernetes/client-node 2.0 does on its own). Fails if a client-node
// upgrade renames the internal it wraps.
import dc from 'node:diagnostics_channel';
import { CoreV1Api, KubernetesObjectApi } from '@kubernetes/client-node';
import { reuseConnections } from '../../runtime/kube-connections.js';
import { testEnvInfo } from '../support/environment.js';
import { kubeConfigOf } from '../support/testenv.js';

const info = testEnvInfo();

/** Connections undici opened while `fn` ran. */
async function connectionsOpened(fn: () => Promise<void>): Promise<number> {
  let opened = 0;
  const count = () => opened++;
  dc.subscribe('undici:client:connected', count);
  try {
    await fn();
  } finally {
    dc.unsubscribe('undici:client:connected', count);
  }
  return opened;
}

async function twentyRequests(kc: ReturnType<typeof kubeConfigOf>): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const objects = KubernetesObjectApi.makeApiClient(kc);
  for (let i = 0; i < 10; i++) {
    await core.listNamespace();
    await objects.read({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
  }
}

describe('reuseConnections', () => {
  it('serves twenty requests of two API clients over one kept-alive connection', async () => {
    const kc = kubeConfigOf(info, 'cluster-a');
    expect(reuseConnections(kc)).toBe(true);
    expect(await connectionsOpened(() => twentyRequests(kc))).toBeLessThanOrEqual(2);
  });

  it('is needed: without it every request opens a connection', async () => {
    const opened = await connectionsOpened(() => twentyRequests(kubeConfigOf(info, 'cluster-a')));
    expect(opened).toBeGreaterThanOrEqual(20);
  });
});
