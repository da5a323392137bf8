// Structured JSON logs, one object a line on stderr, with the same keys
// everywhere: gatewaydns ("namespace/name"), cluster ("namespace/name"),
// recordset, error.
export type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type Fields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  with(fields: Fields): Logger;
}

export function createLogger(
  level: Level = 'info',
  base: Fields = {},
  write: (line: string) => void = (l) => process.stderr.write(l),
): Logger {
  const emit = (at: Level, msg: string, fields?: Fields) => {
    if (ORDER[at] < ORDER[level]) return;
    const entry: Fields = { ts: new Date().toISOString(), level: at, msg, ...base };
    for (const [k, v] of Object.entries(fields ?? {})) entry[k] = v instanceof Error ? errorText(v) : v;
    write(`${JSON.stringify(entry)}\n`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    with: (fields) => createLogger(level, { ...base, ...fields }, write),
  };
}

/** A one-line description of any thrown value, including the API server's message when there is one. */
export function errorText(err: unknown): string {
  if (err instanceof Error) {
    const body = (err as { body?: unknown }).body;
    const code = (err as { code?: unknown }).code;
    const apiMessage = apiStatusMessage(body);
    if (apiMessage) return `${typeof code === 'number' ? `HTTP ${code}: ` : ''}${apiMessage}`;
    const cause = (err as { cause?: unknown }).cause;
    return cause instanceof Error && !err.message.includes(cause.message)
      ? `${err.message}: ${cause.message}`
      : err.message;
  }
  return String(err);
}

function apiStatusMessage(body: unknown): string | undefined {
  if (typeof body === 'string') {
    try {
      return apiStatusMessage(JSON.parse(body));
    } catch {
      return body.slice(0, 300) || undefined;
    }
  }
  if (body && typeof body === 'object' && 'message' in body && typeof body.message === 'string')
    return body.message;
  return undefined;
}

/** The HTTP status of a client-node ApiException (or a watch error), if any. */
export function httpStatus(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown } | undefined;
  if (typeof e?.code === 'number') return e.code;
  if (typeof e?.statusCode === 'number') return e.statusCode;
  return undefined;
}
