// The failover walkthrough's one step that is the same with local processes
// and with real pods (examples/README.md "Failover between clusters"): the
// Clusters labelled with their region, examples/gateway-dns-failover.yaml
// applied, and the wait until every dns-server has reported all healthy.
import path from 'node:path';
import { eventually } from '../test/support/kube.js';
import { repoRoot } from '../test/support/paths.js';
import type { Kubectl } from './kubectl.js';

export async function applyFailoverPolicy(management: Kubectl, namespace: string): Promise<void> {
  for (const [cluster, region] of [
    ['cluster-a', 'eu'],
    ['cluster-c', 'us'],
  ] as const)
    await management.run(['-n', namespace, 'label', 'cluster', cluster, `region=${region}`, '--overwrite']);
  await management.run(['apply', '-f', path.join(repoRoot(), 'examples', 'gateway-dns-failover.yaml')]);
  // Published and probed: every dns-server has reported its view, and all is healthy.
  await eventually(
    () =>
      management.run([
        '-n',
        namespace,
        'wait',
        '--for=condition=Degraded=False',
        '--timeout=2s',
        'gatewaydns/dev-team-gateway-dns',
      ]),
    60_000,
    500,
  );
}
