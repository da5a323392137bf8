// Writes charts/capi-dns from config/ (or, with --check, fails when the
// checked-in chart is not what config/ renders to). kustomize is kubectl's
// (PATH, or the one `npm run testenv:build` puts in .cache/bin).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { chartDifferences, renderChart, writeChart } from './render.js';

function main(): void {
  // dist/scripts/helm-chart/main.js: the repository is three folders up.
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
  const built = path.join(root, '.cache', 'bin', 'kubectl');
  const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } });
  const chart = renderChart(root, existsSync(built) ? built : 'kubectl');
  if (values.check) {
    const differences = chartDifferences(root, chart);
    if (differences.length) {
      process.stderr.write(
        `charts/capi-dns is not what config/ renders to (${differences.join(', ')}): run npm run generate:helm-chart\n`,
      );
      process.exit(1);
    }
    return;
  }
  writeChart(root, chart);
  process.stderr.write('wrote charts/capi-dns\n');
}

main();
