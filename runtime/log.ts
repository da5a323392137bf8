// Structured JSON logs for every component, one object a line on stderr, with
// the same keys everywhere: ts, level, msg, component, and the objects a line
// concerns (gatewaydns "namespace/name", cluster "namespace/name", recordset,
// source, error). pino does the writing; this module keeps the call shape the
// code uses, log.info(msg, fields), and turns any Error in fields into text.
import { pino, type DestinationStream } from 'pino';

export type Level = 'debug' | 'info' | 'warn' | 'error';
export const LEVELS: readonly Level[] = ['debug', 'info', 'warn', 'error'];

export type Fields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  with(fields: Fields): Logger;
}

/**
 * A logger writing to stderr, or to `write` (tests). Writes are synchronous, as a plain
 * process.stderr.write was: a line logged just before process.exit is not lost, and lines of a
 * child process arrive in order.
 */
export function createLogger(
  level: Level = 'info',
  base: Fields = {},
  write?: (line: string) => void,
): Logger {
  const destination: DestinationStream = write ? { write } : pino.destination({ dest: 2, sync: true });
  return wrap(
    pino(
      {
        level,
        base: null,
        messageKey: 'msg',
        timestamp: () => `,"ts":"${new Date().toISOString()}"`,
        formatters: { level: (label) => ({ level: label }) },
      },
      destination,
    ).child(base),
  );
}

function wrap(p: pino.Logger): Logger {
  return {
    debug: (msg, fields) => p.debug(plain(fields), msg),
    info: (msg, fields) => p.info(plain(fields), msg),
    warn: (msg, fields) => p.warn(plain(fields), msg),
    error: (msg, fields) => p.error(plain(fields), msg),
    with: (fields) => wrap(p.child(plain(fields))),
  };
}

/** Fields with every Error replaced by its one-line text (pino would otherwise log "{}"). */
function plain(fields: Fields | undefined): Fields {
  if (!fields) return {};
  let out: Fields | undefined;
  for (const k in fields) {
    const v = fields[k];
    if (v instanceof Error) (out ??= { ...fields })[k] = errorText(v);
  }
  return out ?? fields;
}

export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  with: () => silentLogger,
};

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

/** The line a process writes when it cannot even start: the same keys, no logger needed. */
export function fatalLine(component: string, msg: string, err: unknown): string {
  return `${JSON.stringify({ ts: new Date().toISOString(), level: 'error', msg, component, error: errorText(err) })}\n`;
}
