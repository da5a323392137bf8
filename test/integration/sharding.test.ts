// The sharding primitives of ADR 0207 (membership Leases, rendezvous
// assignment, a Lease per shard as the fence) on the real management API
// server, with replicas as Sharder instances in this process: every shard held
// by exactly its assigned replica, a joining replica takes only its share, a
// crashed one's shards are held again by the others within 15 s, and at no
// sampled moment do two replicas hold the same shard (the fence turns a
// silent replica's hold off before its Lease can expire for anyone else).
import { CoordinationV1Api } from '@kubernetes/client-node';
import { createLogger } from '../../operator/manager/runtime/log.js';
import { shardsOf } from '../../operator/manager/sharding/assignment.js';
import { Sharder } from '../../operator/manager/sharding/sharder.js';
import { testEnvInfo } from '../support/environment.js';
import { eventually } from '../support/kube.js';
import { kubeConfigOf } from '../support/testenv.js';

const SHARDS = 16;
const NAMESPACE = 'kube-system';

describe('sharding across replicas (real API server)', () => {
  const kc = kubeConfigOf(testEnvInfo(), 'management');
  const group = `shard-test-${Date.now().toString(36)}`;
  const replicas = new Map<string, Sharder>();
  const halted = new Set<string>();
  const overlaps: string[] = [];
  let sampler: NodeJS.Timeout | undefined;

  function start(identity: string): Promise<void> {
    const sharder = new Sharder({
      kc,
      namespace: NAMESPACE,
      identity,
      group,
      shards: SHARDS,
      log: createLogger('error', { replica: identity }),
    });
    replicas.set(identity, sharder);
    return sharder.start();
  }

  /** Held shards per live replica, as each replica's own fence says. */
  function held(): Map<string, number[]> {
    return new Map([...replicas].filter(([id]) => !halted.has(id)).map(([id, s]) => [id, s.heldShards]));
  }

  async function settledOn(members: string[]): Promise<Map<string, number[]>> {
    return eventually(
      async () => {
        const now = held();
        for (const m of members)
          if (now.get(m)?.join() !== shardsOf(m, members, SHARDS).join())
            throw new Error(
              `${m} holds ${now.get(m)?.join()}, assigned ${shardsOf(m, members, SHARDS).join()}`,
            );
        return now;
      },
      30_000,
      50,
    );
  }

  beforeAll(() => {
    // Every 25 ms: does any shard pass every replica's own fence at once (the crashed one's included)?
    sampler = setInterval(() => {
      const holders = new Map<number, string[]>();
      for (const [id, s] of replicas)
        for (const shard of s.heldShards) holders.set(shard, [...(holders.get(shard) ?? []), id]);
      for (const [shard, ids] of holders)
        if (ids.length > 1) overlaps.push(`shard ${shard}: ${ids.join(', ')}`);
    }, 25);
  });

  afterAll(async () => {
    clearInterval(sampler);
    await Promise.all([...replicas].map(([id, s]) => (halted.has(id) ? s.halt() : s.stop())));
    const api = kc.makeApiClient(CoordinationV1Api);
    for (const lease of (await api.listNamespacedLease({ namespace: NAMESPACE })).items)
      if (lease.metadata?.name?.startsWith(group))
        await api.deleteNamespacedLease({ namespace: NAMESPACE, name: lease.metadata.name });
  });

  it('serves every shard from exactly its assigned replica, moves only a joiner’s share, and takes over a crashed replica’s within 15 s', async () => {
    await Promise.all(['replica-a', 'replica-b', 'replica-c'].map(start));
    const three = await settledOn(['replica-a', 'replica-b', 'replica-c']);
    expect([...three.values()].flat().sort((a, b) => a - b)).toEqual(
      Array.from({ length: SHARDS }, (_, i) => i),
    );

    // A fourth replica joins: each of the others keeps a subset of what it held.
    await start('replica-d');
    const four = await settledOn(['replica-a', 'replica-b', 'replica-c', 'replica-d']);
    for (const id of ['replica-a', 'replica-b', 'replica-c'])
      for (const shard of four.get(id)!) expect(three.get(id)).toContain(shard);
    expect(four.get('replica-d')!.length).toBeGreaterThan(0);

    // replica-c crashes: nothing released, its Leases left to expire.
    const lost = four.get('replica-c')!;
    halted.add('replica-c');
    const crashedAt = Date.now();
    await replicas.get('replica-c')!.halt();
    const after = await settledOn(['replica-a', 'replica-b', 'replica-d']);
    const takeoverMs = Date.now() - crashedAt;
    expect([...after.values()].flat().sort((a, b) => a - b)).toEqual(
      Array.from({ length: SHARDS }, (_, i) => i),
    );
    for (const id of ['replica-a', 'replica-b', 'replica-d'])
      for (const shard of four.get(id)!) expect(after.get(id)).toContain(shard);
    expect(takeoverMs).toBeLessThan(15_000);
    process.stderr.write(
      `sharding: ${lost.length} shards of a crashed replica held again after ${takeoverMs} ms\n`,
    );

    // replica-b leaves cleanly: its share moves at once, without waiting out a Lease.
    const leftAt = Date.now();
    await replicas.get('replica-b')!.stop();
    halted.add('replica-b');
    await settledOn(['replica-a', 'replica-d']);
    expect(Date.now() - leftAt).toBeLessThan(5_000);

    expect(overlaps).toEqual([]);
  }, 90_000);
});
