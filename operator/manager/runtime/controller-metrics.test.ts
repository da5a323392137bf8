import { Metrics } from './metrics.js';
import { TerminalError, WorkQueue } from './workqueue.js';

const series = async (m: Metrics, prefix: string) =>
  (await m.render()).split('\n').filter((l) => l.startsWith(prefix));

describe("a controller's queue and reconciles under controller-runtime's names", () => {
  it('counts adds, results, errors and retries, and observes the waits and work times', async () => {
    const metrics = new Metrics();
    const outcomes: Record<string, () => Promise<{ requeueAfterMs?: number } | void>> = {
      ok: async () => {},
      later: async () => ({ requeueAfterMs: 60_000 }),
      broken: async () => {
        throw new Error('boom');
      },
      hopeless: async () => {
        throw new TerminalError('never');
      },
    };
    const queue = new WorkQueue<string>((key) => outcomes[key]!(), {
      concurrency: 2,
      baseDelayMs: 60_000,
      metrics: metrics.controller('test', 2),
    });
    for (const key of Object.keys(outcomes)) queue.add(key);
    queue.add('ok'); // already waiting: not a second add
    queue.start();
    await new Promise((r) => setTimeout(r, 50));
    expect(await series(metrics, 'controller_runtime_reconcile_total{')).toEqual([
      'controller_runtime_reconcile_total{controller="test",result="success"} 1',
      'controller_runtime_reconcile_total{controller="test",result="error"} 2',
      'controller_runtime_reconcile_total{controller="test",result="requeue"} 0',
      'controller_runtime_reconcile_total{controller="test",result="requeue_after"} 1',
    ]);
    expect(await series(metrics, 'controller_runtime_reconcile_errors_total{')).toEqual([
      'controller_runtime_reconcile_errors_total{controller="test"} 2',
    ]);
    expect(await series(metrics, 'controller_runtime_terminal_reconcile_errors_total{')).toEqual([
      'controller_runtime_terminal_reconcile_errors_total{controller="test"} 1',
    ]);
    expect(await series(metrics, 'workqueue_adds_total{')).toEqual([
      'workqueue_adds_total{name="test",controller="test"} 4',
    ]);
    expect(await series(metrics, 'workqueue_retries_total{')).toEqual([
      'workqueue_retries_total{name="test",controller="test"} 1',
    ]);
    expect(await series(metrics, 'workqueue_depth{')).toEqual([
      'workqueue_depth{name="test",controller="test"} 0',
    ]);
    expect(await series(metrics, 'workqueue_queue_duration_seconds_count{')).toEqual([
      'workqueue_queue_duration_seconds_count{name="test",controller="test"} 4',
    ]);
    expect(await series(metrics, 'controller_runtime_reconcile_time_seconds_count{')).toEqual([
      'controller_runtime_reconcile_time_seconds_count{controller="test"} 4',
    ]);
    expect(await series(metrics, 'controller_runtime_max_concurrent_reconciles{')).toEqual([
      'controller_runtime_max_concurrent_reconciles{controller="test"} 2',
    ]);
    await queue.shutdown();
  });

  it('shows the keys being handled: active workers, unfinished work, the longest running', async () => {
    const metrics = new Metrics();
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    const queue = new WorkQueue<string>(() => held, {
      concurrency: 1,
      metrics: metrics.controller('slow', 1),
    });
    queue.start();
    queue.add('a');
    queue.add('b');
    await new Promise((r) => setTimeout(r, 30));
    expect(await series(metrics, 'controller_runtime_active_workers{')).toEqual([
      'controller_runtime_active_workers{controller="slow"} 1',
    ]);
    expect(await series(metrics, 'workqueue_depth{')).toEqual([
      'workqueue_depth{name="slow",controller="slow"} 1',
    ]);
    const [longest] = await series(metrics, 'workqueue_longest_running_processor_seconds{');
    expect(Number(longest!.split(' ')[1])).toBeGreaterThan(0.02);
    release();
    await queue.shutdown();
  });

  it("serves client-go's leader election gauge only with leader election, and each cluster's connection", async () => {
    const metrics = new Metrics();
    expect(await series(metrics, 'leader_election_master_status{')).toEqual([]);
    metrics.leaderElection = { name: 'capi-dns-controller', leading: false };
    metrics.clusters = () => [
      { key: 'dev-team/cluster-a', healthy: true },
      { key: 'dev-team/cluster-b', healthy: false },
      { key: 'dev-team/cluster-c', healthy: undefined },
    ];
    expect(await series(metrics, 'leader_election_master_status{')).toEqual([
      'leader_election_master_status{name="capi-dns-controller"} 0',
    ]);
    expect(await series(metrics, 'capi_dns_cluster_connection_up{')).toEqual([
      'capi_dns_cluster_connection_up{cluster_namespace="dev-team",cluster_name="cluster-a"} 1',
      'capi_dns_cluster_connection_up{cluster_namespace="dev-team",cluster_name="cluster-b"} 0',
      'capi_dns_cluster_connection_up{cluster_namespace="dev-team",cluster_name="cluster-c"} 1',
    ]);
  });
});
