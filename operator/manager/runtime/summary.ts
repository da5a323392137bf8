// Status text bounded by construction. A condition message that lists every
// cluster grows with the fleet, and the API refuses a message over 32 KiB
// (metav1.Condition), so the whole status patch fails exactly when many
// clusters fail at once and the status goes on saying what it said before.
// As Cluster API's condition summaries do, a message names the first few and
// counts the rest; the detail per cluster lives in its own status entry,
// itself capped.

/** The API's limit on a condition message (metav1.Condition, and our CRD's maxLength). */
export const CONDITION_MESSAGE_LIMIT = 32768;
/** A condition message is a summary: far below the API's limit, so that it stays readable. */
export const CONDITION_MESSAGE_MAX = 2048;
/**
 * One cluster's message or error in status.clusters[] and status.mirrors[]: long enough for any
 * error of ours (a refused kubeconfig names cluster, Secret and field in under 200), short enough
 * that 1,000 clusters with both entries failing stay near 0.7 MB, half of etcd's 1.5 MB object limit.
 */
export const CLUSTER_MESSAGE_MAX = 300;
/** One cluster's error quoted inside a condition message. */
export const QUOTED_ERROR_MAX = 160;
/** How many items a summary names before it counts the rest. */
export const NAMED_ITEMS = 3;

const ELLIPSIS = '…';

/**
 * The text cut to at most maxBytes octets of UTF-8, never inside a character, with an ellipsis
 * saying it was cut. Bytes rather than characters: the API server's message limits count bytes
 * in some versions and characters in others; a byte count is within both.
 */
export function truncateText(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  const room = maxBytes - Buffer.byteLength(ELLIPSIS, 'utf8');
  if (room <= 0) return '';
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    const size = Buffer.byteLength(char, 'utf8');
    if (bytes + size > room) break;
    bytes += size;
    end += char.length;
  }
  return text.slice(0, end) + ELLIPSIS;
}

/** "a, b, c and 37 more": the first `named` items, then a count of the rest. */
export function namedFirst(items: readonly string[], named = NAMED_ITEMS): string {
  if (items.length <= named) return items.join(', ');
  return `${items.slice(0, named).join(', ')} and ${items.length - named} more`;
}

/** Like namedFirst, for items that are themselves sentences (an error each): joined with "; ". */
export function describedFirst(items: readonly string[], named = NAMED_ITEMS): string {
  if (items.length <= named) return items.join('; ');
  return `${items.slice(0, named).join('; ')}; and ${items.length - named} more`;
}

/** "3 of 40 clusters" / "1 of 1 cluster". */
export function countOf(count: number, total: number, noun: string): string {
  return `${count} of ${total} ${noun}${total === 1 ? '' : 's'}`;
}
