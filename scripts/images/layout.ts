// Where things sit in the images of capi-dns-controller and dns-server: the
// same /app layout as images/*.Dockerfile (generated from components.ts).

/** The dist/ folders each component's main.js loads at run time. */
export const RUNTIME_FOLDERS = {
  operator: ['api', 'runtime', 'operator'],
  'dns-server': ['api', 'runtime', 'dns-server'],
} as const;

/**
 * Compiled modules each component loads, from where `npm ci` builds them to where the image has
 * them (where the dist/ file that loads them looks, dns-server/native/module.ts; images/*.Dockerfile
 * copy the same).
 */
export const NATIVE_MODULES = {
  operator: [],
  'dns-server': [
    {
      from: 'dns-server/serve/native/build/Release/udp_batch.node',
      to: 'dist/dns-server/serve/native/udp_batch.node',
    },
  ],
} as const;

/** Working directory: package.json ("type": "module"), node_modules/, dist/. */
export const APP_DIR = '/app';
