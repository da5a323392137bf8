// The metrics tables of docs/operating.md and what /metrics serves, as
// name → type, so that a test can hold one against the other (both
// components: the unit test against the collectors, the monitoring
// integration test against the real processes).

export type MetricTypes = Map<string, string>;

/**
 * The rows of the table under a heading of docs/operating.md: "| `name` | type | labels | meaning |",
 * the name in backquotes.
 */
export function documentedMetrics(markdown: string, heading: string): MetricTypes {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const rest = markdown.slice(start + heading.length + 2);
  const end = rest.search(/\n#{1,4} /);
  const section = end < 0 ? rest : rest.slice(0, end);
  const out: MetricTypes = new Map();
  for (const line of section.split('\n')) {
    const m = /^\| `([a-zA-Z_:][a-zA-Z0-9_:]*)` \| (counter|gauge|histogram|summary) \|/.exec(line);
    if (m) out.set(m[1]!, m[2]!);
  }
  return out;
}

/** The `# TYPE` lines of an exposition, without prom-client's default process and Node.js metrics. */
export function servedMetrics(exposition: string): MetricTypes {
  const out: MetricTypes = new Map();
  for (const line of exposition.split('\n')) {
    const m = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (m && !/^(process|nodejs)_/.test(m[1]!)) out.set(m[1]!, m[2]!);
  }
  return out;
}
