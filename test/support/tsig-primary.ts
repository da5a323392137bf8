// Our dns-server as the primary of one zone for transfer tests: on a loopback
// address of its own (so that its access list tells the clients apart), its
// records from a file, its TSIG key from a key file as tsig-keygen writes it,
// the secondaries it lists, /metrics on --health-listen; signed with a fresh
// ECDSA P-256 key when asked. stop() ends the server and removes its files,
// and a start that fails removes what it had made.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dig, startDnsServer, type DnsProcess } from './dns.js';
import { eventually } from './kube.js';
import { freePortOn, keyFileText, type TsigKeySpec } from './secondaries.js';

export interface TsigPrimaryOptions {
  zone: string;
  /** The loopback address it listens on (a free port there is taken). */
  address: string;
  key: TsigKeySpec;
  /** Its records: YAML of DNSRecordSets, as the operator writes them. */
  records: string;
  /** The secondaries it lists (--transfer-secondary), as address:port. */
  secondaries: string[];
  /** Signs the zone with a fresh key (--dnssec-key). */
  dnssec?: boolean;
  /** Further flags of the dns-server. */
  args?: string[];
  /** A name of the zone that must be answered before the start resolves (the whole zone built). */
  waitFor?: string;
}

export interface TsigPrimary {
  server: DnsProcess;
  address: string;
  port: number;
  /** The records file: written again, the server builds the zone again. */
  recordsFile: string;
  /** The SOA serial it serves now. */
  servedSerial(): Promise<number>;
  /** The text of its /metrics. */
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

export async function startTsigPrimary(opts: TsigPrimaryOptions): Promise<TsigPrimary> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-tsig-primary-'));
  let server: DnsProcess | undefined;
  const stop = async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const recordsFile = path.join(dir, 'records.yaml');
    writeFileSync(recordsFile, opts.records);
    const keyFile = path.join(dir, 'tsig.conf');
    writeFileSync(keyFile, keyFileText(opts.key));
    const signing: string[] = [];
    if (opts.dnssec) {
      const signingKey = path.join(dir, 'key.pem');
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      writeFileSync(signingKey, privateKey.export({ format: 'pem', type: 'pkcs8' }));
      signing.push('--dnssec-key', `${opts.zone}=${signingKey}`);
    }
    const port = await freePortOn(opts.address);
    server = await startDnsServer(
      [
        '--listen',
        `${opts.address}:${port}`,
        '--zone',
        opts.zone,
        '--records-file',
        recordsFile,
        ...signing,
        '--tsig-key-file',
        keyFile,
        ...opts.secondaries.flatMap((s) => ['--transfer-secondary', s]),
        ...(opts.args ?? []),
      ],
      { health: true },
    );
    const running = server;
    const primary: TsigPrimary = {
      server: running,
      address: opts.address,
      port,
      recordsFile,
      servedSerial: async () =>
        Number((await dig(port, ['+short', opts.zone, 'SOA'], opts.address)).stdout.trim().split(/\s+/)[2]),
      metrics: async () => (await fetch(`http://127.0.0.1:${running.healthPort}/metrics`)).text(),
      stop,
    };
    const waitFor = opts.waitFor;
    if (waitFor)
      await eventually(async () => {
        const answer = (await dig(port, ['+short', waitFor], opts.address)).stdout.trim();
        if (!answer) throw new Error(`${waitFor}: not answered yet`);
      }, 20_000);
    return primary;
  } catch (err) {
    await stop();
    throw err;
  }
}
