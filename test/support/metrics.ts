// Reading Prometheus text exposition in tests and benchmarks: the sum of a
// metric's series whose labels include some pairs (a counter split by
// controller and result, or by zone, proto and type, read as one number).

/** "name{labels}" → value, as test/support/operator.ts's metricsAt returns them, or exposition text. */
export function sumMetric(
  metrics: Record<string, number> | string,
  name: string,
  labels: Record<string, string> = {},
): number {
  const series = typeof metrics === 'string' ? parseExposition(metrics) : metrics;
  let sum = 0;
  for (const [key, value] of Object.entries(series)) {
    const brace = key.indexOf('{');
    if ((brace < 0 ? key : key.slice(0, brace)) !== name) continue;
    const text = brace < 0 ? '' : key.slice(brace);
    if (Object.entries(labels).every(([k, v]) => text.includes(`${k}="${v}"`))) sum += value;
  }
  return sum;
}

/** Exposition text as "name{labels}" → value. */
export function parseExposition(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) ([-0-9.e+]+|NaN|[+-]Inf)$/.exec(line);
    if (m) out[m[1]!] = Number(m[2]);
  }
  return out;
}
