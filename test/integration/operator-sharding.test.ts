// Active-active replicas (ADR 0207, issue 21) as they run in production: three
// operator processes with --shards against ten real workload clusters in five
// management namespaces (teams), every API server logging each write with the
// writer's user agent (testenv --audit-writes). Checked from those logs, not
// from what the replicas say: each team's record sets and status are written
// by the replica its shard is assigned to and by no other; a killed replica's
// teams are served again by the others within 15 s; a joining replica takes
// only the teams it wins; and in no cluster do two replicas' writes interleave.
import path from 'node:path';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { ownerOf, shardOfNamespace, shardsOf } from '../../operator/manager/sharding/assignment.js';
import { auditedWrites, type AuditedWrite } from '../support/audit.js';
import { registerWorkloadCluster, waitForClusterProvisioned } from '../support/capi.js';
import { apply, eventually, installCrds, readManifests } from '../support/kube.js';
import {
  ensureRecordsNamespace,
  metricsOf,
  readRecordSet,
  recordLines,
  setLoadBalancer,
  startOperator,
  waitForReady,
  type OperatorProcess,
} from '../support/operator.js';
import { repoRoot } from '../support/paths.js';
import { TestEnv } from '../support/testenv.js';

const SHARDS = 16;
const FIRST = ['replica-a', 'replica-b', 'replica-c'];
const VICTIM = 'replica-a';
const JOINER = 'replica-d';
const AFTER_KILL = FIRST.filter((r) => r !== VICTIM);
const AFTER_JOIN = [...AFTER_KILL, JOINER];

const ownerIn = (members: string[]) => (team: string) =>
  ownerOf(shardOfNamespace(team, SHARDS), members) ?? '(none)';

/**
 * Five team names, picked in order from team-0, team-1, ... so that every case is exercised
 * whatever the hash makes of them: each first replica serves a team, the victim's teams go to
 * the others, and the joiner takes some teams but not all.
 */
function pickTeams(): string[] {
  const first = ownerIn(FIRST);
  const afterKill = ownerIn(AFTER_KILL);
  const afterJoin = ownerIn(AFTER_JOIN);
  const wants: ((t: string) => boolean)[] = [
    ...FIRST.map((r) => (t: string) => first(t) === r),
    (t) => afterJoin(t) === JOINER,
    (t) => afterJoin(t) === afterKill(t),
  ];
  const teams: string[] = [];
  for (let i = 0; teams.length < 5 && i < 1000; i++) {
    const t = `team-${i}`;
    const open = wants.filter((w) => !teams.some(w));
    if (open.some((w) => w(t)) || teams.length + open.length < 5) teams.push(t);
  }
  return teams;
}

const TEAMS = pickTeams();
const CLUSTERS = TEAMS.flatMap((team, i) =>
  [`s${2 * i}`, `s${2 * i + 1}`].map((cluster) => ({ team, cluster })),
);
const teamOf = (cluster: string) => CLUSTERS.find((c) => c.cluster === cluster)!.team;
const clustersOf = (team: string) => CLUSTERS.filter((c) => c.team === team).map((c) => c.cluster);

const replicaOf = (w: AuditedWrite) => /^capi-dns-controller \((.+)\)$/.exec(w.userAgent)?.[1];

describe('operator replicas sharded by management namespace (3 processes, 10 clusters, audited)', () => {
  let env: TestEnv;
  const replicas = new Map<string, OperatorProcess>();
  const kc = (cluster: string): KubeConfig => env.kubeConfig(cluster);
  let address = 0;
  /** The LoadBalancer address each cluster's envoy has now. */
  const addressOf = new Map<string, string>();
  async function setAddress(cluster: string): Promise<string> {
    const ip = `192.0.2.${++address}`;
    await setLoadBalancer(kc(cluster), 'projectcontour', 'envoy', [{ ip }]);
    addressOf.set(cluster, ip);
    return ip;
  }

  /** The operator's writes into a cluster (record sets, Corefile, anything) since `since`, as logged. */
  const operatorWrites = (cluster: string, since = 0) =>
    auditedWrites(env.info, cluster).filter(
      (w) => replicaOf(w) !== undefined && w.code < 400 && w.at >= since,
    );

  async function startReplica(identity: string): Promise<void> {
    replicas.set(
      identity,
      await startOperator(env.cluster('management').kubeconfig, [
        '--shards',
        String(SHARDS),
        '--identity',
        identity,
      ]),
    );
  }

  /** Moves a cluster's LoadBalancer and waits until its team's other cluster has the new address. */
  async function moveAndWait(cluster: string, timeoutMs: number): Promise<{ ms: number; at: number }> {
    const team = teamOf(cluster);
    const other = clustersOf(team).find((c) => c !== cluster)!;
    const began = Date.now();
    const ip = await setAddress(cluster);
    await eventually(
      async () => {
        const lines = recordLines(await readRecordSet(kc(other), `${team}.gw`));
        if (!lines.some((l) => l.includes(ip)))
          throw new Error(`${other}: ${ip} not published yet: ${lines.join('; ')}`);
      },
      timeoutMs,
      50,
    );
    return { ms: Date.now() - began, at: began };
  }

  beforeAll(async () => {
    env = await TestEnv.start({ workloadClusters: CLUSTERS.map((c) => c.cluster), auditWrites: true });
    const ours = readManifests(path.join(repoRoot(), 'crds'));
    await installCrds(kc('management'), [
      ...ours,
      ...readManifests(path.join(repoRoot(), 'test', 'fixtures')),
    ]);
    for (const { team, cluster } of CLUSTERS) {
      await installCrds(kc(cluster), ours);
      await registerWorkloadCluster(kc('management'), {
        namespace: team,
        cluster,
        kubeconfigPath: env.cluster(cluster).kubeconfig,
        labels: { dns: 'on' },
      });
      await ensureRecordsNamespace(kc(cluster));
      await setAddress(cluster);
    }
    await Promise.all(
      CLUSTERS.map(({ team, cluster }) => waitForClusterProvisioned(kc('management'), team, cluster)),
    );
    await apply(
      kc('management'),
      TEAMS.map(
        (team) =>
          ({
            apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
            kind: 'GatewayDNS',
            metadata: { name: 'gw', namespace: team },
            spec: {
              clusterSelector: { matchLabels: { dns: 'on' } },
              service: 'projectcontour/envoy',
              resolutionType: 'loadBalancer',
            },
          }) as KubernetesObject,
      ),
    );
    for (const r of FIRST) await startReplica(r);
  }, 300_000);

  afterAll(async () => {
    await Promise.all([...replicas.values()].map((op) => op.stop()));
    await env?.stop();
  }, 90_000);

  it("once all three hold their shards, each team is written for by its shard's replica and by no other", async () => {
    const owner = ownerIn(FIRST);
    for (const team of TEAMS) await waitForReady(kc('management'), team, 'gw', 'Ready', 60_000);
    // Every cluster answers for both clusters of its team: the cold start is done.
    for (const { team, cluster } of CLUSTERS)
      await eventually(async () => {
        const lines = recordLines(await readRecordSet(kc(cluster), `${team}.gw`)).join('\n');
        for (const source of clustersOf(team)) expect(lines).toContain(addressOf.get(source));
      }, 30_000);
    // The first replica up was alone for a moment and served every team: settled is when each
    // replica holds exactly the shards the three of them assign it.
    await eventually(async () => {
      for (const r of FIRST)
        expect({ r, held: (await metricsOf(replicas.get(r)!))['capi_dns_shards_held'] }).toEqual({
          r,
          held: shardsOf(r, FIRST, SHARDS).length,
        });
    }, 30_000);
    const settledAt = Date.now();
    await Promise.all(TEAMS.map((team) => moveAndWait(clustersOf(team)[0]!, 15_000)));
    for (const { team, cluster } of CLUSTERS) {
      const writers = new Set(operatorWrites(cluster, settledAt).map(replicaOf));
      expect({ cluster, writers: [...writers] }).toEqual({ cluster, writers: [owner(team)] });
    }
    await eventually(async () => {
      for (const team of TEAMS) await waitForReady(kc('management'), team, 'gw', 'Ready', 10_000);
    });
    const statusWriters = new Map<string, Set<string | undefined>>();
    for (const w of auditedWrites(env.info, 'management'))
      if (w.at >= settledAt && w.resource === 'gatewaydns' && replicaOf(w) && w.namespace)
        statusWriters.set(w.namespace, (statusWriters.get(w.namespace) ?? new Set()).add(replicaOf(w)));
    for (const team of TEAMS)
      expect({ team, writers: [...(statusWriters.get(team) ?? [])] }).toEqual({
        team,
        writers: [owner(team)],
      });
    const served = Object.fromEntries(FIRST.map((r) => [r, TEAMS.filter((t) => owner(t) === r)]));
    process.stderr.write(`sharding: teams per replica ${JSON.stringify(served)}\n`);
  }, 180_000);

  it("a killed replica's teams are served by the others within 15 s", async () => {
    const victimTeams = TEAMS.filter((t) => ownerIn(FIRST)(t) === VICTIM);
    expect(victimTeams.length).toBeGreaterThan(0);
    const killedAt = Date.now();
    await replicas.get(VICTIM)!.kill();
    replicas.delete(VICTIM);
    const takeovers = await Promise.all(victimTeams.map((team) => moveAndWait(clustersOf(team)[0]!, 30_000)));
    const worst = Math.max(...takeovers.map((t) => t.at + t.ms - killedAt));
    process.stderr.write(
      `sharding: takeover after a kill ${takeovers.map((t) => t.at + t.ms - killedAt).join(', ')} ms\n`,
    );
    expect(worst).toBeLessThan(15_000);
    // The change was written by the replica the shard now belongs to.
    for (const team of victimTeams) {
      const other = clustersOf(team)[1]!;
      const after = operatorWrites(other, killedAt);
      expect(new Set(after.map(replicaOf))).toEqual(new Set([ownerIn(AFTER_KILL)(team)]));
    }
  }, 60_000);

  it('a joining replica takes only the teams it wins; the others keep their writer', async () => {
    const before = ownerIn(AFTER_KILL);
    const after = ownerIn(AFTER_JOIN);
    const moved = TEAMS.filter((t) => before(t) !== after(t));
    expect(moved.length).toBeGreaterThan(0);
    expect(moved.every((t) => after(t) === JOINER)).toBe(true);
    const joinedAt = Date.now();
    await startReplica(JOINER);
    const wanted = shardsOf(JOINER, AFTER_JOIN, SHARDS).length;
    await eventually(
      async () => {
        const held = (await metricsOf(replicas.get(JOINER)!))['capi_dns_shards_held'];
        expect(held).toBe(wanted);
      },
      30_000,
      100,
    );
    const handoverMs = Date.now() - joinedAt;
    // A change in every team now: each written by its owner after the join.
    const changedAt = Date.now();
    const latencies = await Promise.all(TEAMS.map((team) => moveAndWait(clustersOf(team)[0]!, 30_000)));
    process.stderr.write(
      `sharding: join → joiner holds its ${wanted} shards after ${handoverMs} ms (process start included), then a change answered in ${latencies.map((l) => l.ms).join(', ')} ms (moved: ${moved.join(', ')})\n`,
    );
    for (const team of TEAMS) {
      const other = clustersOf(team)[1]!;
      const writers = new Set(
        operatorWrites(other)
          .filter((w) => w.at >= changedAt)
          .map(replicaOf),
      );
      expect({ team, writers: [...writers] }).toEqual({ team, writers: [after(team)] });
      // The joiner never wrote for a team it did not win.
      if (!moved.includes(team))
        for (const c of clustersOf(team))
          expect(operatorWrites(c, joinedAt).filter((w) => replicaOf(w) === JOINER)).toEqual([]);
    }
  }, 90_000);

  it('in no cluster do two replicas write at once: each writer is one unbroken run, the last its owner', () => {
    const summary: Record<string, string> = {};
    for (const { team, cluster } of CLUSTERS) {
      const writes = operatorWrites(cluster).sort((a, b) => a.at - b.at);
      const runs: string[] = [];
      for (const w of writes) if (runs[runs.length - 1] !== replicaOf(w)) runs.push(replicaOf(w)!);
      summary[cluster] = `${writes.length} writes: ${runs.join(' → ')}`;
      // A replica writing again after another took over would be two writers for one cluster.
      expect({ cluster, runs }).toEqual({ cluster, runs: [...new Set(runs)] });
      expect(runs[runs.length - 1]).toBe(ownerIn(AFTER_JOIN)(team));
    }
    process.stderr.write(`sharding: operator writes per cluster ${JSON.stringify(summary, null, 1)}\n`);
  });
});
