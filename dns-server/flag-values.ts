// Reading argv against a table of flags (flags.ts's FLAGS): each flag's value
// or its default, checked as the flag wants it; a wrong one is a UsageError
// that names the flag. Pure.
import { parseArgs } from 'node:util';

export class UsageError extends Error {}

/** A flag as the table declares it. */
export interface FlagSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  short?: string;
  default?: string;
  help: string;
}

/** argv as given, read flag by flag. */
export class FlagValues<K extends string> {
  constructor(
    private readonly values: Record<string, unknown>,
    private readonly table: Readonly<Record<K, FlagSpec>>,
  ) {}

  /** A boolean flag given. */
  set(k: K): boolean {
    return Boolean(this.values[k]);
  }

  /** Its value, or its default. */
  string(k: K): string | undefined {
    const v = this.values[k];
    return v !== undefined ? (v as string) : this.table[k].default;
  }

  /** A repeatable flag's values, in the order given. */
  list(k: K): string[] {
    return (this.values[k] as string[] | undefined) ?? [];
  }

  int(k: K, min: number, max: number): number {
    const raw = this.string(k)!;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < min || n > max)
      throw new UsageError(`--${k} ${raw}: not an integer from ${min} to ${max}`);
    return n;
  }

  duration(k: K): number {
    return duration(this.string(k)!, k);
  }

  mebibytes(k: K): number {
    return mebibytes(this.string(k)!, k);
  }
}

/** argv (without node and the script) read against the table; undefined when --help was asked for. */
export function readArgv<K extends string>(
  argv: string[],
  table: Readonly<Record<K, FlagSpec>>,
): FlagValues<K> | undefined {
  const options = Object.fromEntries(
    Object.entries<FlagSpec>(table).map(([k, f]) => [
      k,
      {
        type: f.type,
        ...(f.multiple ? { multiple: true } : {}),
        ...(f.short ? { short: f.short } : {}),
      },
    ]),
  ) as Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>;
  let values: Record<string, unknown>;
  try {
    values = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return values.help ? undefined : new FlagValues(values, table);
}

/** "127.0.0.1:53", "[::1]:53", ":53" (host '': every address of both families). */
export function hostPort(raw: string, flag: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(raw);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new UsageError(`--${flag} ${raw}: not HOST:PORT`);
  return { host: m[1] ?? m[2] ?? '', port };
}

/** "160Mi" → 160 (MiB, the unit V8's heap limits take; at least 16). */
export function mebibytes(raw: string, flag: string): number {
  const m = /^(\d{1,6})Mi$/.exec(raw);
  if (!m || Number(m[1]) < 16)
    throw new UsageError(`--${flag} ${raw}: not a size like 160Mi (at least 16Mi)`);
  return Number(m[1]);
}

/** "500ms", "10s", "5m", "1h" → milliseconds. */
export function duration(raw: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(raw);
  if (!m) throw new UsageError(`--${flag} ${raw}: not a duration like 500ms, 10s or 5m`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
  return Number(m[1]) * unit;
}
