// npm run generate:dockerfiles: writes images/<component>.Dockerfile from
// components.ts (dockerfile.test.ts fails when they are not in step).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { dockerfiles } from './dockerfile.js';

// dist/scripts/images/write-dockerfiles.js: the repository is three folders up.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
for (const [file, text] of dockerfiles(root)) {
  writeFileSync(path.join(root, file), text);
  process.stderr.write(`wrote ${file}\n`);
}
