// The percentile of the propagation benches: the nearest rank of an ascending list (p99 of 20
// changes is the slowest one). bench/dns-load.ts keeps its own (an index of p·n) for query latencies.
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}
