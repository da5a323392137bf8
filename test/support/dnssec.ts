// Real DNSSEC validators for the tests (ADR 0106): delv with the zone's trust
// anchor, and unbound as a validating resolver with a stub zone to the server
// under test. Each runs on loopback with files of its own, removed on stop.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dig, freePort, type DnsProcess } from './dns.js';
import { stopChild } from './stop-child.js';

export interface Delv {
  /** delv's verdict: "fully validated", "negative response, fully validated", or its failure. */
  validated: boolean;
  negative: boolean;
  output: string;
}

/** A trust-anchors file for delv -a: the zone's DNSKEY as a static key. */
export function delvAnchor(zone: string, dnskey: string, dir: string): string {
  const [flags, protocol, algorithm, key] = dnskey.split(' ');
  const file = path.join(dir, `delv-anchor-${key!.slice(0, 12).replace(/[^A-Za-z0-9]/g, '_')}`);
  writeFileSync(
    file,
    `trust-anchors {\n  ${zone}. static-key ${flags} ${protocol} ${algorithm} "${key}";\n};\n`,
  );
  return file;
}

/** delv @127.0.0.1 -p port with the zone as its root of trust (+root), validating name/type. */
export function delv(port: number, anchor: string, zone: string, name: string, type: string): Promise<Delv> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'delv',
      ['-a', anchor, `+root=${zone}`, '@127.0.0.1', '-p', String(port), '+tcp', name, type],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('exit', () =>
      resolve({
        validated: /; (negative response, )?fully validated/.test(output),
        negative: /negative response, fully validated/.test(output),
        output,
      }),
    );
  });
}

/**
 * unbound validating with `ds` ("<tag> <alg> <digest type> <digest>", one or several: a parent
 * publishing two DS during a rollover) as the zone's anchor.
 */
export async function startUnbound(
  zone: string,
  ds: string | string[],
  serverPort: number,
): Promise<DnsProcess> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-unbound-'));
  const port = await freePort();
  writeFileSync(
    path.join(dir, 'anchor'),
    [ds]
      .flat()
      .map((d) => `${zone}. IN DS ${d}\n`)
      .join(''),
  );
  writeFileSync(
    path.join(dir, 'unbound.conf'),
    `server:
  interface: 127.0.0.1@${port}
  port: ${port}
  do-ip6: no
  chroot: ""
  username: ""
  directory: "${dir}"
  pidfile: "${dir}/unbound.pid"
  use-syslog: no
  logfile: ""
  verbosity: 1
  val-log-level: 2
  do-not-query-localhost: no
  module-config: "validator iterator"
  trust-anchor-file: "${dir}/anchor"
  # RFC 6761's test. is served locally (NXDOMAIN) by default.
  local-zone: "test." nodefault
  # Answers of TTL 0 (the failover test's) are not kept; nor is anything else for long.
  cache-max-ttl: 1
  cache-max-negative-ttl: 1
stub-zone:
  name: "${zone}"
  stub-addr: 127.0.0.1@${serverPort}
`,
  );
  const child = spawn('unbound', ['-d', '-c', path.join(dir, 'unbound.conf')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let logs = '';
  child.stderr!.on('data', (d: Buffer) => (logs += d.toString()));
  const stop = async () => {
    await stopChild(child, 5000);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; ; i++) {
      const r = await dig(port, [zone, 'SOA']);
      if (r.status !== 'NONE') break;
      if (i > 50 || child.exitCode !== null) throw new Error(`unbound did not start:\n${logs}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { port, dir, child, logs: () => logs, stop };
}
