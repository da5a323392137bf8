import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DNS_SERVER_NODE_FLAGS } from './dns-server-node-flags.js';
import { dockerfiles } from './dockerfile.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('images/*.Dockerfile', () => {
  it('are what scripts/images/components.ts makes (npm run generate:dockerfiles)', () => {
    for (const [file, text] of dockerfiles(ROOT))
      expect({ file, text: readFileSync(path.join(ROOT, file), 'utf8') }).toEqual({ file, text });
  });

  it("start the dns-server with the Node flags npm run images' image has", () => {
    const text = readFileSync(path.join(ROOT, 'images', 'dns-server.Dockerfile'), 'utf8');
    expect(text).toContain(
      `ENTRYPOINT ["node", ${DNS_SERVER_NODE_FLAGS.map((f) => `"${f}"`).join(', ')}, "dist/dns-server/main.js"]`,
    );
  });
});
