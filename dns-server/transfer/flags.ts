// The transfer flags of the standalone mode (the Kubernetes mode takes the
// same from the DNSZone, through the zone declaration): secondaries of the
// --zone zones, the TSIG key file, the bounds. The key file is read here
// once, so that a bad one stops the start with a usage error, and again by
// each process that signs (keysOf): the key itself is not in the Config.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import type { ZoneConfig } from '../zone/compile.js';
import { parseTsigKeys } from './key-file.js';
import type { TsigKey } from './tsig.js';

export const TRANSFER_FLAGS = {
  'transfer-secondary': {
    type: 'string',
    multiple: true,
    help: 'ADDRESS[:PORT] (IPv6 in brackets; port 53 by default) of a secondary of the --zone zones, repeatable: it is sent NOTIFY and may transfer them (AXFR, IXFR) with the TSIG key',
  },
  'tsig-key-file': {
    type: 'string',
    help: 'TSIG key as tsig-keygen writes it (hmac-sha256): transfers and NOTIFY are signed with it; needed with --transfer-secondary',
  },
  'transfer-max-concurrent': {
    type: 'string',
    default: '10',
    help: 'zone transfers streaming at once (per answering process); more get SERVFAIL and retry',
  },
  'ixfr-journal-octets': {
    type: 'string',
    default: '16777216',
    help: 'octets of differences kept per zone for IXFR (0: none, every IXFR is answered with the whole zone)',
  },
} as const;

export interface TransferFlags {
  keyFile: string;
  /** The key the --zone zones are signed with (the file's first). */
  keyName: string;
  secondaries: { address: string; port: number }[];
  maxConcurrent: number;
  journalOctets: number;
}

/** What is wrong with a transfer flag; ../flags.ts makes it a usage error. */
export class TransferFlagError extends Error {}

type Name = keyof typeof TRANSFER_FLAGS;

/** The flags' values as ../flag-values.ts reads them (not imported: dns-server/*.ts imports this folder). */
export interface TransferFlagValues {
  string(k: Name): string | undefined;
  list(k: Name): string[];
  int(k: Name, min: number, max: number): number;
}

export function transferFlagsOf(flags: TransferFlagValues): TransferFlags | undefined {
  const keyFile = flags.string('tsig-key-file');
  const secondaries = flags.list('transfer-secondary').map(secondaryOf);
  if (!keyFile) {
    if (secondaries.length > 0)
      throw new TransferFlagError('--transfer-secondary: needs --tsig-key-file (transfers are signed)');
    return undefined;
  }
  let keys: TsigKey[];
  try {
    keys = keysOf(keyFile);
  } catch (err) {
    throw new TransferFlagError(`--tsig-key-file ${keyFile}: ${(err as Error).message}`);
  }
  return {
    keyFile,
    keyName: keys[0]!.name,
    secondaries,
    maxConcurrent: flags.int('transfer-max-concurrent', 1, 10_000),
    journalOctets: flags.int('ixfr-journal-octets', 0, 2 ** 31 - 1),
  };
}

/** The keys of a tsig-keygen file. */
export function keysOf(file: string): TsigKey[] {
  return parseTsigKeys(readFileSync(file, 'utf8'), file);
}

function secondaryOf(raw: string): { address: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/.exec(raw);
  const address = m?.[1] ?? m?.[2] ?? '';
  const port = m?.[3] === undefined ? 53 : Number(m[3]);
  if (!m || net.isIP(address) === 0 || port < 1 || port > 65535)
    throw new TransferFlagError(`--transfer-secondary ${raw}: not ADDRESS[:PORT] with an IP address`);
  return { address, port };
}

/** The --zone zones (not the clusterset zone, which is this cluster's own) with the flags' secondaries. */
export function withSecondaries(
  zones: ZoneConfig[],
  transfer: TransferFlags | undefined,
  clustersetDomain: string | undefined,
): ZoneConfig[] {
  if (!transfer || transfer.secondaries.length === 0) return zones;
  return zones.map((z) =>
    z.name === clustersetDomain
      ? z
      : { ...z, transfer: { secondaries: transfer.secondaries, keyName: transfer.keyName } },
  );
}
