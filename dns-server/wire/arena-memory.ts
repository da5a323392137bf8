// Where a build's answer arena lives (docs/adr/0106, "the arena on huge pages").
// A signed zone's arena is tens of megabytes (18.8 MB at 20,000 records) read at
// random, one answer a query: on 4 KiB pages that is thousands of pages, beyond
// the TLB's reach, on 2 MiB pages ten. Advised for transparent huge pages
// (MADV_HUGEPAGE, through the dns-server's native module) before it is written,
// it is backed by 2 MiB pages where the kernel has them. With THP at "never" the
// advice does nothing; off Linux, or without the module, the arena is ordinary
// memory.
import { errnoName, loadNativeModule } from '../native/module.js';

const HUGE_PAGE = 2 << 20;
/**
 * Smaller arenas stay on ordinary pages: the 2 MiB of alignment room would be a large part of them,
 * and an unsigned zone's (0.9 MB at 20,000 records) is read fast enough from them.
 */
export const HUGE_PAGES_FROM = 4 << 20;

/** Where an arena was put: on memory advised for huge pages, small enough not to need it, or why not. */
export type ArenaPages = 'advised' | 'small' | `not advised: ${string}`;

/** A copy of `octets` that owns its memory (transferable), advised for huge pages when large. */
export function placeArena(octets: Uint8Array): { arena: Uint8Array; pages: ArenaPages } {
  const length = octets.length;
  let pages: ArenaPages = 'small';
  if (length >= HUGE_PAGES_FROM) {
    const mod = loadNativeModule();
    if (mod instanceof Error) pages = `not advised: ${mod.message}`;
    else {
      // Fresh memory, not yet written: a fault in an advised range then takes a whole huge page.
      const room = new Uint8Array(length + HUGE_PAGE);
      const at = mod.hugePages(room);
      if (at >= 0) {
        const arena = room.subarray(at, at + length);
        arena.set(octets);
        return { arena, pages: 'advised' };
      }
      pages = `not advised: madvise ${errnoName(-1 - at)}`;
    }
  }
  const arena = new Uint8Array(length);
  arena.set(octets);
  return { arena, pages };
}
