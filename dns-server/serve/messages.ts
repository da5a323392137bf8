// What the primary and its answering processes (--workers, main.ts) send each
// other, in one place that imports no code: the primary sends each new build's
// answers; an answering process asks for them once it listens for messages,
// says which port it bound, and reports its query counters for /metrics. The
// build thread's messages are in ../build/messages.ts.
import type { ServedData } from '../wire/served.js';
import type { QueryCounters } from './metrics.js';

/** Primary → answering worker. */
export type ToAnswerer =
  | { type: 'served'; served: ServedData }
  /** The TSIG keys of the zones declared with transfer (ADR 0216); the secret in base64. */
  | { type: 'keys'; keys: { name: string; secret: string }[] };

/** Answering worker → primary. */
export type FromAnswerer =
  { type: 'want-data' } | { type: 'listening'; port: number } | { type: 'counters'; counters: QueryCounters };
