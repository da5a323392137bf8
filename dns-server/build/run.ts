// One build: the sources' inputs (record sets, or the text of a records file)
// → validated, merged zones → every answer encoded into one arena. Runs in a
// worker thread (worker.ts), so that neither the parsed YAML nor the
// zones' records ever live on the thread that answers queries; tests call it
// in process.
import { parseRecordsFile } from '../sources/records-file.js';
import type { Logger } from '../../runtime/log.js';
import { encodeServed } from '../wire/served.js';
import { transferImageOf } from '../transfer/image.js';
import { compileZones, ParseCache, type SourcedRecordSet } from '../zone/compile.js';
import { consume } from '../zone/consume.js';
import type { BuildReply, BuildRequest, LogEntry } from './messages.js';

/** @param cache kept by the caller between builds (see ParseCache) */
export function runBuild(req: BuildRequest, cache: ParseCache = new ParseCache()): BuildReply {
  const logs: LogEntry[] = [];
  const log = collectingLogger(logs);
  const broken: BuildReply['broken'] = [];
  const input: SourcedRecordSet[] = [];
  for (const i of req.inputs) {
    if (i.yaml === undefined) {
      for (const s of i.sets ?? []) input.push(s);
      continue;
    }
    try {
      const sets = parseRecordsFile(i.yaml, i.source, log);
      for (const s of sets) input.push(s);
      if (i.fresh) log.info('records file loaded', { source: i.source, recordSets: sets.length });
    } catch (err) {
      broken.push({ source: i.source, error: (err as Error).message });
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
  // Same data as served: nothing to encode (the store keeps serving, and keeps its serial).
  const served = built.fingerprint === req.previousFingerprint ? undefined : encodeServed(built.zones);
  if (served) {
    const configs = new Map(req.zones.map((z) => [z.name, z]));
    served.transfer = built.zones.flatMap((z) => {
      const transfer = configs.get(z.name)?.transfer;
      return transfer ? [transferImageOf(z, transfer)] : [];
    });
  }
  return {
    served,
    fingerprint: built.fingerprint,
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
