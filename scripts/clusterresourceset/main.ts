// Writes config/clusterresourceset/ from config/workload (or, with --check,
// fails when the checked-in files are not what config/workload renders to).
// `--from DIR --out FILE` does the same for an overlay of your own (your
// registry's images, say). kustomize is kubectl's (PATH, or the one
// `npm run testenv:build` puts in .cache/bin).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { renderClusterResourceSet } from './render.js';
import { fileURLToPath } from 'node:url';

function main(): void {
  // dist/scripts/clusterresourceset/main.js: the repository is three folders up.
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
  const built = path.join(root, '.cache', 'bin', 'kubectl');
  const { values } = parseArgs({
    options: {
      from: { type: 'string', default: path.join(root, 'config', 'workload') },
      out: {
        type: 'string',
        default: path.join(root, 'config', 'clusterresourceset', 'clusterresourceset.yaml'),
      },
      check: { type: 'boolean', default: false },
    },
  });
  const want = renderClusterResourceSet(values.from, existsSync(built) ? built : 'kubectl');
  if (values.check) {
    const have = existsSync(values.out) ? readFileSync(values.out, 'utf8') : '';
    if (have !== want) {
      process.stderr.write(
        `${values.out} is not what ${values.from} renders to: run npm run generate:clusterresourceset\n`,
      );
      process.exit(1);
    }
    return;
  }
  writeFileSync(values.out, want);
  process.stderr.write(`wrote ${values.out}\n`);
}

main();
