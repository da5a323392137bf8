// One Prometheus registry per process, with prom-client's default process and
// Node collectors (resident memory, CPU, event-loop lag, GC, open handles),
// which are what an SRE expects to find next to a component's own metrics.
import { collectDefaultMetrics, Registry } from 'prom-client';

export { Counter, Gauge, Histogram, Registry } from 'prom-client';

export function processRegistry(labels: Record<string, string> = {}): Registry {
  const registry = new Registry();
  registry.setDefaultLabels(labels);
  collectDefaultMetrics({ register: registry });
  return registry;
}
