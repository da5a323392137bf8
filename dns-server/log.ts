// Structured JSON logs, one object per line on stderr, the same keys everywhere
// (component, zone, recordset, source, error).

export type Level = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  with(fields: Record<string, unknown>): Logger;
}

const ORDER: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export function jsonLogger(
  level: Level = 'info',
  base: Record<string, unknown> = {},
  write: (line: string) => void = (line) => process.stderr.write(line),
): Logger {
  const emit = (at: Level, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[at] < ORDER[level]) return;
    const entry: Record<string, unknown> = {
      ts: new Date().toISOString(),
      level: at,
      msg,
      ...base,
      ...fields,
    };
    for (const [k, v] of Object.entries(entry)) if (v instanceof Error) entry[k] = v.message;
    write(`${JSON.stringify(entry)}\n`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    with: (fields) => jsonLogger(level, { ...base, ...fields }, write),
  };
}

export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  with: () => silentLogger,
};
