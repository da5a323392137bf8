// npm run demo -- --outside: the zone beyond the fleet (examples/README.md "The
// zone beyond the fleet", ADR 0215). Each workload cluster's dns-server is
// exposed (config/dns-server-exposed; the load balancer's address, set as a
// cloud's controller would, is the dns-server's own loopback address, port
// 53), a DNSZone with spec.nameservers.expose makes them the NS of the zone,
// and an unbound on the host, outside every cluster, follows the delegation
// from what status.parentRecords says the parent zone needs. curl from the
// host then resolves kuard through it.
//
// The seam for a company's secondary (issue 43 part 2): a secondary that
// takes the zone by transfer is listed in the DNSZone's spec.nameservers.names
// and, with its address, as one more stub-addr of startOutsideResolver.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { DEFAULT_RECORDS_NAMESPACE, DEFAULT_ZONE, EXPOSED_DNS_SERVICE, type DNSZone } from '../api/index.js';
import { eventually } from '../test/support/kube.js';
import { repoRoot } from '../test/support/paths.js';
import type { Kubectl } from './kubectl.js';
import { PodNetwork } from './pod.js';
import type { ManagedProcess, ProcessGroup } from './processes.js';

export const OUTSIDE_DNSZONE = 'xcc-test';

/** Applies config/dns-server-exposed and gives its Service the dns-server's address, as a cloud's load balancer would. */
export async function exposeDnsServer(kubectl: Kubectl, kc: KubeConfig, address: string): Promise<void> {
  await kubectl.run(['apply', '--server-side', '-k', path.join(repoRoot(), 'config', 'dns-server-exposed')]);
  await kc.makeApiClient(CoreV1Api).patchNamespacedServiceStatus(
    {
      name: EXPOSED_DNS_SERVICE,
      namespace: DEFAULT_RECORDS_NAMESPACE,
      body: { status: { loadBalancer: { ingress: [{ ip: address }] } } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

/** Applies examples/dnszone-outside.yaml and waits until every cluster's exposed server is an NS of the zone. */
export async function applyOutsideZone(management: Kubectl, clusters: number): Promise<DNSZone> {
  await management.run(['apply', '-f', path.join(repoRoot(), 'examples', 'dnszone-outside.yaml')]);
  return eventually(
    async () => {
      const zone = JSON.parse(
        await management.run(['get', 'dnszone', OUTSIDE_DNSZONE, '-o', 'json']),
      ) as DNSZone;
      const servers = zone.status?.nameservers ?? [];
      if (servers.length !== clusters)
        throw new Error(`${servers.length} of ${clusters} exposed dns-servers are NS`);
      return zone;
    },
    30_000,
    250,
  );
}

/**
 * The resolver outside every cluster: unbound on `address`:53, recursion for the host, xcc.test
 * reached as its parent would delegate it (the NS names and glue of status.nameservers), the
 * zone's own NS set then learnt from the servers (stub-prime).
 */
export function startOutsideResolver(
  processes: ProcessGroup,
  dir: string,
  address: string,
  zone: DNSZone,
): { unbound: ManagedProcess; host: PodNetwork } {
  const conf = path.join(dir, 'unbound.conf');
  const servers = zone.status?.nameservers ?? [];
  writeFileSync(
    conf,
    [
      'server:',
      `  interface: ${address}`,
      '  access-control: 127.0.0.0/8 allow',
      '  do-not-query-localhost: no',
      '  username: ""',
      `  directory: "${dir}"`,
      '  chroot: ""',
      '  pidfile: ""',
      '  use-syslog: no',
      '  logfile: ""',
      '  verbosity: 1',
      // xcc.test is no real delegation from the root: unbound asks the parent's servers as given
      // here, unsigned, and ".test" is not one of the names it answers locally (RFC 6761) here.
      `  domain-insecure: "${DEFAULT_ZONE}"`,
      `  local-zone: "${DEFAULT_ZONE.split('.').at(-1)}." nodefault`,
      'stub-zone:',
      `  name: "${DEFAULT_ZONE}"`,
      ...servers.map((s) => `  stub-host: "${s.name}"`),
      ...servers.flatMap((s) => s.addresses.map((a) => `  stub-addr: ${a}`)),
      '  stub-prime: yes',
      '',
    ].join('\n'),
  );
  const unbound = processes.start('unbound', 'unbound', ['-d', '-c', conf]);
  return { unbound, host: new PodNetwork(dir, address) };
}
