// Kubernetes mode against a real API server of its own (it is stopped and
// started here, so not the shared environment): DNSRecordSets appear, change
// and disappear in DNS within a second; the server keeps answering while the
// API server is down and catches up once it is back.
import path from 'node:path';
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import {
  DEFAULT_RECORDS_NAMESPACE,
  DNSRECORDSET_PLURAL,
  GROUP,
  VERSION,
  type DNSRecord,
} from '../../api/index.js';
import { ensureNamespace } from '../support/capi.js';
import { deleteGeneratedSets, generatedSets, putGeneratedSets } from '../support/recordsets.js';
import { dig, startDnsServer, type DnsProcess } from '../support/dns.js';
import { apply, eventually, installCrds, readManifests } from '../support/kube.js';
import { repoRoot } from '../support/paths.js';
import { startCluster, stopCluster, TestEnv } from '../support/testenv.js';

const CLUSTER = 'cluster-x';
const SMALL = '10.0.3.1';

function recordSet(name: string, records: DNSRecord[]) {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'DNSRecordSet',
    metadata: { name, namespace: DEFAULT_RECORDS_NAMESPACE },
    spec: { records },
  };
}

/** Milliseconds until `check` passes, polling dig every 20 ms. */
async function timeUntil(check: () => Promise<void>, timeoutMs = 5000): Promise<number> {
  const began = Date.now();
  await eventually(check, timeoutMs, 20);
  return Date.now() - began;
}

describe('dns-server in Kubernetes mode', () => {
  let env: TestEnv;
  let kc: KubeConfig;
  let server: DnsProcess;

  beforeAll(async () => {
    env = await TestEnv.start({ workloadClusters: [CLUSTER] });
    kc = env.kubeConfig(CLUSTER);
    await installCrds(kc, readManifests(path.join(repoRoot(), 'crds')));
    await ensureNamespace(kc, DEFAULT_RECORDS_NAMESPACE);
    server = await startDnsServer(['--zone', 'xcc.test', '--kubeconfig', env.cluster(CLUSTER).kubeconfig], {
      health: true,
    });
    await eventually(async () => {
      const res = await fetch(`http://127.0.0.1:${server.healthPort}/readyz`);
      if (res.status !== 200) throw new Error(`readyz ${res.status}`);
    });
  }, 240_000);
  afterAll(async () => {
    await server?.stop();
    await env?.stop();
  });

  const answer = async (name: string, type = 'A') =>
    (await dig(server.port, ['+short', name, type])).stdout.trim().split('\n').filter(Boolean).sort();

  it('serves record sets as they appear, change and disappear, each within a second', async () => {
    await apply(kc, [recordSet('one', [{ name: '*.gw.xcc.test', type: 'A', values: ['10.0.0.5'] }])]);
    const appeared = await timeUntil(async () =>
      expect(await answer('kuard.gw.xcc.test')).toEqual(['10.0.0.5']),
    );
    // A second record set naming the same owner and type is merged.
    await apply(kc, [
      recordSet('two', [{ name: '*.gw.xcc.test', type: 'A', values: ['10.0.0.6', '10.0.0.5'] }]),
    ]);
    const merged = await timeUntil(async () =>
      expect(await answer('kuard.gw.xcc.test')).toEqual(['10.0.0.5', '10.0.0.6']),
    );
    await apply(kc, [recordSet('one', [{ name: '*.gw.xcc.test', type: 'A', values: ['10.0.0.7'] }])]);
    const changed = await timeUntil(async () =>
      expect(await answer('kuard.gw.xcc.test')).toEqual(['10.0.0.5', '10.0.0.6', '10.0.0.7']),
    );
    const api = kc.makeApiClient(CustomObjectsApi);
    for (const name of ['one', 'two'])
      await api.deleteNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: DEFAULT_RECORDS_NAMESPACE,
        plural: DNSRECORDSET_PLURAL,
        name,
      });
    const gone = await timeUntil(async () =>
      expect((await dig(server.port, ['kuard.gw.xcc.test', 'A'])).status).toBe('NXDOMAIN'),
    );
    for (const ms of [appeared, merged, changed, gone]) expect(ms).toBeLessThan(1000);
  });

  it('ends its build thread when rebuilds stop, and starts another for the next change', async () => {
    const idle = await startDnsServer([
      '--zone',
      'xcc.test',
      '--kubeconfig',
      env.cluster(CLUSTER).kubeconfig,
      '--build-worker-idle',
      '200ms',
      '--log-level',
      'debug',
    ]);
    try {
      const started = () =>
        idle
          .logs()
          .split('\n')
          .filter((l) => l.includes('"build worker started"')).length;
      const ended = () =>
        idle
          .logs()
          .split('\n')
          .filter((l) => l.includes('"build worker ended"')).length;
      const answerOf = async (name: string) =>
        (await dig(idle.port, ['+short', name, 'A'])).stdout.trim().split('\n').filter(Boolean);
      for (const value of ['10.0.2.1', '10.0.2.2']) {
        const before = started();
        await eventually(async () => expect(ended()).toBe(before), 5000, 50);
        await apply(kc, [recordSet('idle', [{ name: 'idle.xcc.test', type: 'A', values: [value] }])]);
        await eventually(async () => expect(await answerOf('idle.xcc.test')).toEqual([value]), 5000, 20);
        expect(started()).toBe(before + 1);
      }
    } finally {
      await idle.stop();
    }
  });

  it('fails a build past --build-heap-limit with a clear error, keeps serving the last data, and stays up', async () => {
    const limited = await startDnsServer([
      '--zone',
      'xcc.test',
      '--kubeconfig',
      env.cluster(CLUSTER).kubeconfig,
      '--build-heap-limit',
      '16Mi',
    ]);
    const api = kc.makeApiClient(CustomObjectsApi);
    try {
      await apply(kc, [recordSet('small', [{ name: 'small.xcc.test', type: 'A', values: [SMALL] }])]);
      const answerOf = async (name: string) =>
        (await dig(limited.port, ['+short', name, 'A'])).stdout.trim().split('\n').filter(Boolean);
      await eventually(async () => expect(await answerOf('small.xcc.test')).toEqual([SMALL]), 5000, 20);
      // 20,000 records take more than 16 MiB of build heap (the first few sets, created one by one, do not).
      const { sets } = generatedSets(20_000);
      const last = sets.at(-1)!.spec.records.find((r) => r.type === 'A' && !r.name.startsWith('*'))!;
      await putGeneratedSets(api, sets);
      await eventually(
        async () => expect(limited.logs()).toContain('needed more than --build-heap-limit 16Mi'),
        60_000,
        100,
      );
      expect(limited.logs()).not.toContain('building in the main thread');
      expect(limited.child.exitCode).toBeNull();
      expect(await answerOf('small.xcc.test')).toEqual([SMALL]);
      expect(await answerOf(last.name)).toEqual([]);
      // Back under the limit, builds succeed again.
      await deleteGeneratedSets(api);
      await apply(kc, [recordSet('small', [{ name: 'small.xcc.test', type: 'A', values: ['10.0.3.2'] }])]);
      await eventually(
        async () => expect(await answerOf('small.xcc.test')).toEqual(['10.0.3.2']),
        30_000,
        50,
      );
    } finally {
      await deleteGeneratedSets(api).catch(() => undefined);
      await limited.stop();
    }
  }, 120_000);

  it('keeps answering while the API server is stopped, and catches up after it is back', async () => {
    await apply(kc, [recordSet('steady', [{ name: 'steady.xcc.test', type: 'A', values: ['10.0.1.1'] }])]);
    await timeUntil(async () => expect(await answer('steady.xcc.test')).toEqual(['10.0.1.1']));
    await stopCluster(env.info, CLUSTER);
    try {
      // Long enough for the watch to break and the informer to fail and retry a few times.
      for (let i = 0; i < 6; i++) {
        expect(await answer('steady.xcc.test')).toEqual(['10.0.1.1']);
        await new Promise((r) => setTimeout(r, 500));
      }
      expect(server.logs()).toMatch(/DNSRecordSet watch failed/);
    } finally {
      await startCluster(env.info, CLUSTER);
    }
    await eventually(
      () => apply(kc, [recordSet('steady', [{ name: 'steady.xcc.test', type: 'A', values: ['10.0.1.2'] }])]),
      30_000,
      200,
    );
    await timeUntil(async () => expect(await answer('steady.xcc.test')).toEqual(['10.0.1.2']), 15_000);
    const metrics = await (await fetch(`http://127.0.0.1:${server.healthPort}/metrics`)).text();
    expect(metrics).toMatch(/capi_dns_server_last_sync_age_seconds\{source="kubernetes:capi-dns"\} [\d.]+/);
  });
});
