// Loads the dns-server's native module (../serve/native/udp_batch.c, an N-API
// module in C, docs/adr/0105): the batched UDP path (../serve/native-udp.ts) and
// the huge-page advice for the answer arena (../wire/arena-memory.ts). In a
// folder of its own, so that serve/ and wire/ both use it and neither imports
// the other.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

/** What udp_batch.node exports. */
export interface NativeModule {
  attach(
    fd: number,
    slots: number,
    inRing: Buffer,
    inSlot: number,
    outRing: Buffer,
    outSlot: number,
    lengths: Int32Array,
    stats: Float64Array,
    onBatch: (count: number) => void,
  ): object;
  close(handle: object): void;
  peer(handle: object, slot: number): string;
  /**
   * Advises the 2 MiB-aligned part of `array` for transparent huge pages (MADV_HUGEPAGE); the offset
   * in `array` where that part begins, or -1 - errno (-1 when it has no such part).
   */
  hugePages(array: Uint8Array): number;
}

let module: NativeModule | Error | undefined;

/** The compiled module, or why it cannot be loaded (tried once per process). */
export function loadNativeModule(): NativeModule | Error {
  if (module) return module;
  if (process.platform !== 'linux') return (module = new Error('the native module is built for Linux only'));
  // In the images, in dist/dns-server/serve/native/; in a checkout, where `npm ci` built it, from
  // the sources (jest) or from dist/.
  const candidates = [
    '../serve/native/build/Release/udp_batch.node',
    '../serve/native/udp_batch.node',
    '../../../dns-server/serve/native/build/Release/udp_batch.node',
  ].map((c) => fileURLToPath(new URL(c, import.meta.url)));
  const found = candidates.find((c) => existsSync(c));
  if (!found)
    return (module = new Error(`udp_batch.node not built (npm ci builds it); looked for ${candidates[0]}`));
  try {
    return (module = createRequire(import.meta.url)(found) as NativeModule);
  } catch (err) {
    return (module = new Error(`cannot load ${found}: ${(err as Error).message}`, { cause: err }));
  }
}

/** By number; of two names for one number the first (EAGAIN, not its alias EWOULDBLOCK). */
const errnoNames = new Map<number, string>();
for (const [name, n] of Object.entries(os.constants.errno)) if (!errnoNames.has(n)) errnoNames.set(n, name);

/** An errno as its name (EMSGSIZE), for logs. */
export function errnoName(n: number): string {
  return errnoNames.get(n) ?? String(n);
}
