// Writes config/monitoring/ from scripts/monitoring (or, with --check, fails
// when the checked-in files are not what the sources render to; the unit test
// scripts/monitoring/monitoring.test.ts checks the same in `npm test`).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { renderMonitoring } from './render.js';

async function main(): Promise<void> {
  // dist/scripts/monitoring/main.js: the repository is three folders up.
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
  const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } });
  const files = await renderMonitoring(root);
  const stale: string[] = [];
  for (const [file, text] of files) {
    const target = path.join(root, 'config', 'monitoring', file);
    const have = existsSync(target) ? readFileSync(target, 'utf8') : '';
    if (have === text) continue;
    if (values.check) {
      stale.push(file);
      continue;
    }
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, text);
    process.stderr.write(`wrote ${path.relative(root, target)}\n`);
  }
  if (stale.length) {
    process.stderr.write(
      `config/monitoring/ is out of step (${stale.join(', ')}): run npm run generate:monitoring\n`,
    );
    process.exit(1);
  }
}

await main();
