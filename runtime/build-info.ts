// The `<component>_build_info` gauge every Prometheus exporter carries (CoreDNS's
// coredns_build_info, Go's go_build_info): always 1, the version in its labels,
// so that a dashboard shows which version runs where and a query can join on it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Gauge, type Registry } from 'prom-client';

/** The version in the package.json above this file (the repository's, or the image's /app). */
export function packageVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'capi-dns') return pkg.version ?? 'unknown';
    } catch {
      // No package.json here: look further up.
    }
    const parent = path.dirname(dir);
    if (parent === dir) return 'unknown';
    dir = parent;
  }
}

export function registerBuildInfo(registry: Registry, name: string, component: string): void {
  const info = new Gauge({
    name,
    help: `A metric with a constant '1' value labelled by the ${component}'s version and the Node.js version it runs on.`,
    labelNames: ['version', 'nodejs_version'],
    registers: [registry],
  });
  info.set({ version: packageVersion(), nodejs_version: process.version }, 1);
}
