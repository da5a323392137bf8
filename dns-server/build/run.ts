// One build: the sources' inputs (record sets, or the text of a records file)
// → validated, merged zones → every answer encoded into one arena. Runs in a
// worker thread (worker.ts), so that neither the parsed YAML nor the
// zones' records ever live on the thread that answers queries; tests call it
// in process.
import { ParsedDocuments, parseRecordsFile } from '../sources/records-file.js';
import type { Logger } from '../../runtime/log.js';
import { encodeServed, type ZoneSigning } from '../wire/served.js';
import { transferImageOf } from '../transfer/image.js';
import { dsOf, KeyError, parseKey, type ZoneKey } from '../dnssec/key.js';
import { SignatureCache } from '../dnssec/rrsig.js';
import type { SignedZone } from '../dnssec/signed-zone.js';
import { compileZones, ParseCache, type SourcedRecordSet } from '../zone/compile.js';
import { consume } from '../zone/consume.js';
import type { BuildReply, BuildRequest, LogEntry } from './messages.js';

/**
 * A signed zone is built again at least this often (the store's timer), and its fingerprint changes
 * with it, so that signatures within their refresh period are made again (ADR 0106).
 */
export const RESIGN_PERIOD_SECONDS = 86400;

/**
 * @param cache kept by the caller between builds (see ParseCache)
 * @param signatures kept likewise: a build signs again only RRsets that changed or come due
 * @param documents kept likewise: a records file's documents that did not change are not parsed again
 */
export function runBuild(
  req: BuildRequest,
  cache: ParseCache = new ParseCache(),
  signatures: SignatureCache = new SignatureCache(),
  documents: ParsedDocuments = new ParsedDocuments(),
): BuildReply {
  const logs: LogEntry[] = [];
  const log = collectingLogger(logs);
  const broken: BuildReply['broken'] = [];
  const input: SourcedRecordSet[] = [];
  documents.begin();
  for (const i of req.inputs) {
    if (i.yaml === undefined) {
      for (const s of i.sets ?? []) input.push(s);
      continue;
    }
    try {
      const sets = parseRecordsFile(i.yaml, i.source, log, documents);
      for (const s of sets) input.push(s);
      if (i.fresh) log.info('records file loaded', { source: i.source, recordSets: sets.length });
    } catch (err) {
      broken.push({ source: i.source, error: (err as Error).message });
    }
  }
  const keys = new Map<string, ZoneKey>();
  for (const { zone, pem } of req.keys ?? []) {
    try {
      keys.set(zone, parseKey(pem));
    } catch (err) {
      if (!(err instanceof KeyError)) throw err;
      // As a broken records file: nothing of this build is served, the zone stays as it was.
      broken.push({ source: `dnssec-key:${zone}`, error: `signing key of ${zone}: ${err.message}` });
    }
  }
  if (broken.length > 0)
    return {
      served: undefined,
      fingerprint: '',
      problems: [],
      records: 0,
      recordSets: 0,
      broken,
      probeTargets: [],
      answeringTiers: [],
      logs,
    };
  // The request is this thread's own copy: each set is let go once parsed, so that the input and
  // the zones made from it are not all held at the peak (with 100,000 records, tens of megabytes).
  req.inputs = [];
  const built = compileZones(consume(input), req.zones, req.serial, cache, new Set(req.unhealthy));
  const now = Math.floor(Date.now() / 1000);
  const fingerprint =
    keys.size === 0
      ? built.fingerprint
      : `${built.fingerprint}/dnssec:${[...keys].map(([z, k]) => `${z}:${k.keyTag}:${k.dnskey.toString('hex')}`).join(',')}:${Math.floor(now / RESIGN_PERIOD_SECONDS)}`;
  const signing: ZoneSigning | undefined = keys.size > 0 ? { keys, signatures, now } : undefined;
  // Same data as served: nothing to encode (the store keeps serving, and keeps its serial).
  const signedZones = new Map<string, SignedZone>();
  const served =
    fingerprint === req.previousFingerprint
      ? undefined
      : encodeServed(built.zones, signing, (s) => signedZones.set(s.zone.name, s));
  if (served) {
    const configs = new Map(req.zones.map((z) => [z.name, z]));
    served.transfer = built.zones.flatMap((z) => {
      const transfer = configs.get(z.name)?.transfer;
      return transfer ? [transferImageOf(z, transfer, signedZones.get(z.name))] : [];
    });
  }
  return {
    served,
    fingerprint,
    ...(served && signing
      ? {
          signed: [...keys]
            .filter(([zone]) => req.zones.some((z) => z.name === zone))
            .map(([zone, key]) => ({
              zone,
              keyTag: key.keyTag,
              ds: dsOf(zone, key),
              expires: signatures.earliestBySigner.get(zone) ?? 0,
              made: signatures.made,
              reused: signatures.reused,
            })),
        }
      : {}),
    problems: built.problems,
    records: built.records,
    recordSets: input.length,
    broken,
    probeTargets: built.probeTargets,
    answeringTiers: [...built.answeringTiers].map(([name, tier]) => [name, tier ?? null]),
    logs,
  };
}

function collectingLogger(into: LogEntry[]): Logger {
  const at =
    (level: LogEntry['level']) =>
    (msg: string, fields: Record<string, unknown> = {}): void =>
      void into.push({ level, msg, fields });
  const logger: Logger = {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    with: () => logger,
  };
  return logger;
}
