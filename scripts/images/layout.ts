// Where things sit in the images of capi-dns-controller and dns-server: the
// same /app layout as images/*.Dockerfile (generated from components.ts).

/** The dist/ folders each component's main.js loads at run time. */
export const RUNTIME_FOLDERS = {
  operator: ['api', 'runtime', 'operator'],
  'dns-server': ['api', 'runtime', 'dns-server'],
} as const;

/** Working directory: package.json ("type": "module"), node_modules/, dist/. */
export const APP_DIR = '/app';
