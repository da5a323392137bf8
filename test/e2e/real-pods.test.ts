// The walkthrough with real pods, as a user runs it: the steps of
// `npm run demo -- --pods` (demo/pods.ts), one test each, then what a
// platform team would try next: the operator's leader pod and a dns-server
// pod deleted, and kuard still answering by name. Needs root (testenv --nodes).
import { PodWalkthrough } from '../../demo/pods.js';
import { eventually } from '../support/kube.js';

describe('the walkthrough with real pods', () => {
  const w = new PodWalkthrough();

  afterAll(async () => {
    await w.stop();
  }, 120_000);

  // The steps build on each other: after a failed one the rest would only fail for its reason.
  let failed: string | undefined;
  for (const step of PodWalkthrough.steps)
    it(
      step.title,
      async () => {
        if (failed) throw new Error(`not run: the step "${failed}" failed`);
        const began = Date.now();
        try {
          await step.run(w);
        } catch (err) {
          failed = step.title;
          throw err;
        }
        process.stderr.write(`${step.title}: ${Date.now() - began} ms\n`);
      },
      360_000,
    );

  it('replaces a deleted operator pod; with two replicas the Lease moves to the standby', async () => {
    const management = w.kubectl('management');
    const ns = ['-n', 'capi-dns-system'];
    await management.run([...ns, 'scale', 'deployment/capi-dns-controller', '--replicas=2']);
    await management.run([...ns, 'rollout', 'status', 'deployment/capi-dns-controller', '--timeout=120s']);
    const holder = async (): Promise<string> =>
      management.run([...ns, 'get', 'lease', 'capi-dns-controller', '-o', 'jsonpath={.spec.holderIdentity}']);
    const leader = await eventually(holder, 30_000, 500);
    expect(leader).toMatch(/^capi-dns-controller-/);
    await management.run([...ns, 'delete', 'pod', leader, '--wait=false']);
    const began = Date.now();
    const next = await eventually(
      async () => {
        const h = await holder();
        if (h === leader || h === '') throw new Error(`the Lease is still held by ${h}`);
        return h;
      },
      60_000,
      500,
    );
    process.stderr.write(`operator leader pod deleted → Lease held by ${next}: ${Date.now() - began} ms\n`);
    await management.run([...ns, 'rollout', 'status', 'deployment/capi-dns-controller', '--timeout=120s']);
    await w.curlFromClusterB('kuard-test-after-operator');
  }, 300_000);

  it('keeps answering while a dns-server pod of cluster-b is deleted (two replicas, readiness)', async () => {
    const b = w.kubectl('cluster-b');
    const pods = (
      await b.run([
        '-n',
        'capi-dns',
        'get',
        'pods',
        '-l',
        'app.kubernetes.io/name=capi-dns-server',
        '-o',
        'name',
      ])
    )
      .split(/\s+/)
      .filter(Boolean);
    expect(pods.length).toBe(2);
    await b.run(['-n', 'capi-dns', 'delete', pods[0]!, '--wait=false']);
    await w.curlFromClusterB('kuard-test-dns-server-1');
    await b.run(['-n', 'capi-dns', 'rollout', 'status', 'deployment/capi-dns-server', '--timeout=120s']);
    await w.curlFromClusterB('kuard-test-dns-server-2');
  }, 300_000);
});
