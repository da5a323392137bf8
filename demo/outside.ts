// npm run demo -- --outside: the zone beyond the fleet (examples/README.md "The
// zone beyond the fleet", ADR 0215, 0216). Each workload cluster's dns-server
// is exposed (config/dns-server-exposed; the load balancer's address, set as a
// cloud's controller would, is the dns-server's own loopback address, port
// 53), a DNSZone with spec.nameservers.expose makes them the NS of the zone,
// and its spec.transfer makes an NSD on the host, outside every cluster, a
// secondary of the zone: the company's DNS, taking the zone by AXFR and IXFR
// with TSIG from every exposed dns-server, told of each change by NOTIFY. An
// unbound on the host, the company's resolver, asks that NSD for the zone;
// curl from the host then resolves kuard through it.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { DEFAULT_RECORDS_NAMESPACE, DEFAULT_ZONE, EXPOSED_DNS_SERVICE, type DNSZone } from '../api/index.js';
import { eventually } from '../test/support/kube.js';
import { repoRoot } from '../test/support/paths.js';
import { soaSerial } from '../test/support/secondaries.js';
import type { Kubectl } from './kubectl.js';
import { PodNetwork } from './pod.js';
import type { ManagedProcess, ProcessGroup } from './processes.js';

export const OUTSIDE_DNSZONE = 'xcc-test';
/** examples/dnszone-outside.yaml's spec.transfer: its secondary's address (the default prefix's) and TSIG Secret. */
const EXAMPLE_SECONDARY = '127.0.10.61';
export const OUTSIDE_TSIG_SECRET = { namespace: 'capi-dns-system', name: 'xcc-test-tsig' };
/** The TSIG key's name, as `tsig-keygen -a hmac-sha256 xcc-test-xfr` names it. */
export const OUTSIDE_TSIG_KEY_NAME = 'xcc-test-xfr';

export interface TsigKey {
  name: string;
  /** Base64 of 32 random octets, as tsig-keygen makes an hmac-sha256 key. */
  secret: string;
}

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

/**
 * The TSIG key the zone's transfers are signed with, made as `tsig-keygen -a hmac-sha256` makes it,
 * in the Secret spec.transfer.tsigSecretRef names (data keys name, algorithm, secret). The secret
 * goes to kubectl through a file (mode 0600), not on a command line.
 */
export async function createTsigSecret(management: Kubectl, dir: string): Promise<TsigKey> {
  const key = { name: OUTSIDE_TSIG_KEY_NAME, secret: randomBytes(32).toString('base64') };
  const secretFile = path.join(dir, 'tsig-secret');
  writeFileSync(secretFile, key.secret, { mode: 0o600 });
  await management.run([
    '-n',
    OUTSIDE_TSIG_SECRET.namespace,
    'create',
    'secret',
    'generic',
    OUTSIDE_TSIG_SECRET.name,
    `--from-literal=name=${key.name}`,
    '--from-literal=algorithm=hmac-sha256',
    `--from-file=secret=${secretFile}`,
  ]);
  return key;
}

/**
 * Applies examples/dnszone-outside.yaml (its secondary at this run's address) and waits until every
 * cluster's exposed server is an NS of the zone and the transfer is in force (TransferReady).
 */
export async function applyOutsideZone(
  management: Kubectl,
  clusters: number,
  secondary: string,
  dir: string,
): Promise<DNSZone> {
  const example = path.join(repoRoot(), 'examples', 'dnszone-outside.yaml');
  let file = example;
  if (secondary !== EXAMPLE_SECONDARY) {
    file = path.join(dir, 'dnszone-outside.yaml');
    writeFileSync(file, readFileSync(example, 'utf8').replaceAll(EXAMPLE_SECONDARY, secondary));
  }
  await management.run(['apply', '-f', file]);
  return eventually(
    async () => {
      const zone = JSON.parse(
        await management.run(['get', 'dnszone', OUTSIDE_DNSZONE, '-o', 'json']),
      ) as DNSZone;
      const servers = zone.status?.nameservers ?? [];
      if (servers.length !== clusters)
        throw new Error(`${servers.length} of ${clusters} exposed dns-servers are NS`);
      const transfer = zone.status?.conditions?.find((c) => c.type === 'TransferReady');
      if (transfer?.status !== 'True')
        throw new Error(`TransferReady ${transfer?.status}/${transfer?.reason}: ${transfer?.message}`);
      return zone;
    },
    30_000,
    250,
  );
}

/**
 * The company's DNS: NSD on `address`:53, a secondary of the zone taking it with TSIG from every
 * exposed dns-server (status.nameservers' glue; RFC 1996: whichever NOTIFYs a newer serial), each of
 * them allowed to NOTIFY it. Resolves once it serves the zone, with its serial.
 */
export async function startOutsideSecondary(
  processes: ProcessGroup,
  dir: string,
  address: string,
  zone: DNSZone,
  key: TsigKey,
): Promise<{ nsd: ManagedProcess; serial: number }> {
  const conf = path.join(dir, 'nsd.conf');
  const primaries = (zone.status?.nameservers ?? []).flatMap((s) => s.addresses);
  writeFileSync(
    conf,
    [
      'server:',
      `  ip-address: ${address}@53`,
      '  server-count: 1',
      `  zonesdir: "${dir}"`,
      '  database: ""',
      `  pidfile: "${dir}/nsd.pid"`,
      `  xfrdfile: "${dir}/xfrd.state"`,
      `  xfrdir: "${dir}"`,
      `  zonelistfile: "${dir}/zone.list"`,
      '  username: ""',
      '  chroot: ""',
      '  verbosity: 2',
      'remote-control:',
      '  control-enable: no',
      'key:',
      `  name: "${key.name}"`,
      '  algorithm: hmac-sha256',
      `  secret: "${key.secret}"`,
      'zone:',
      `  name: ${DEFAULT_ZONE}`,
      `  zonefile: "${DEFAULT_ZONE}.zone"`,
      // The dns-servers allow only the listed secondary's address: transfers go out from it.
      `  outgoing-interface: ${address}`,
      ...primaries.map((p) => `  allow-notify: ${p} ${key.name}`),
      ...primaries.map((p) => `  request-xfr: ${p}@53 ${key.name}`),
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  const nsd = processes.start('nsd', '/usr/sbin/nsd', ['-d', '-c', conf]);
  const serial = await eventually(
    async () => {
      if (nsd.child.exitCode !== null) throw new Error(`nsd exited (${nsd.child.exitCode})`);
      const serial = await soaSerial(address, 53, DEFAULT_ZONE);
      if (serial === undefined) throw new Error(`nsd on ${address} does not serve ${DEFAULT_ZONE} yet`);
      return serial;
    },
    30_000,
    250,
  );
  return { nsd, serial };
}

/**
 * The company's resolver, outside every cluster: unbound on `address`:53, recursion for the host,
 * xcc.test asked of the company's own server for it, the NSD secondary (a stub without priming:
 * unbound keeps to the address it is given, as a company's resolver keeps to its own servers).
 */
export function startOutsideResolver(
  processes: ProcessGroup,
  dir: string,
  address: string,
  secondary: string,
): { unbound: ManagedProcess; host: PodNetwork } {
  const conf = path.join(dir, 'unbound.conf');
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
      // xcc.test is no real delegation from the root: unbound asks the company's server as given
      // here, unsigned, and ".test" is not one of the names it answers locally (RFC 6761) here.
      `  domain-insecure: "${DEFAULT_ZONE}"`,
      `  local-zone: "${DEFAULT_ZONE.split('.').at(-1)}." nodefault`,
      'stub-zone:',
      `  name: "${DEFAULT_ZONE}"`,
      `  stub-addr: ${secondary}`,
      '  stub-prime: no',
      '',
    ].join('\n'),
  );
  const unbound = processes.start('unbound', 'unbound', ['-d', '-c', conf]);
  return { unbound, host: new PodNetwork(dir, address) };
}
