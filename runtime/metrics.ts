// One Prometheus registry per process, with prom-client's default process and
// Node collectors (resident memory, CPU, event-loop lag, GC, open handles),
// which are what an SRE expects to find next to a component's own metrics.
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';

export { Counter, Gauge, Histogram, Registry } from 'prom-client';

export function processRegistry(labels: Record<string, string> = {}): Registry {
  const registry = new Registry();
  registry.setDefaultLabels(labels);
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Label values and the value of one series. */
export type Series = [labels: Record<string, string>, value: number];

/**
 * A counter or gauge whose series are all read from the program when scraped: the program counts
 * into plain fields and knows nothing of prom-client.
 */
export function registerRead(
  registry: Registry,
  name: string,
  help: string,
  type: 'counter' | 'gauge',
  labelNames: string[],
  series: () => Iterable<Series>,
): void {
  const registers = [registry];
  if (type === 'gauge')
    new Gauge({
      name,
      help,
      labelNames,
      registers,
      collect() {
        this.reset();
        for (const [labels, value] of series()) this.set(labels, value);
      },
    });
  else
    new Counter({
      name,
      help,
      labelNames,
      registers,
      collect() {
        this.reset();
        for (const [labels, value] of series()) this.inc(labels, value);
      },
    });
}

/**
 * A histogram whose bucket counts are read from the program when scraped: a hot path counts into a
 * plain array (one slot per bucket, the last for +Inf) and a sum, never calling prom-client.
 */
export function registerReadHistogram(
  registry: Registry,
  name: string,
  help: string,
  buckets: readonly number[],
  series: () => Iterable<[labels: Record<string, string>, counts: ArrayLike<number>, sum: number]>,
): void {
  const metric = {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    get() {
      const values: { metricName: string; labels: Record<string, string | number>; value: number }[] = [];
      for (const [labels, counts, sum] of series()) {
        let cumulative = 0;
        buckets.forEach((le, i) => {
          cumulative += counts[i] ?? 0;
          values.push({ metricName: `${name}_bucket`, labels: { ...labels, le }, value: cumulative });
        });
        cumulative += counts[buckets.length] ?? 0;
        values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: cumulative });
        values.push({ metricName: `${name}_sum`, labels, value: sum });
        values.push({ metricName: `${name}_count`, labels, value: cumulative });
      }
      return Promise.resolve({ name, help, type: 'histogram', values, aggregator: 'sum' });
    },
  };
  // prom-client types registerMetric for its own classes; the registry only needs name, type and get().
  registry.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);
}
