// The two images of capi-dns, defined once: `npm run images` builds them from
// this (main.ts) and images/*.Dockerfile are generated from it (dockerfile.ts),
// so that both start the same program with the same Node flags, user, working
// directory and ports.
import { OPERATOR_NODE_FLAGS } from '../../operator/node-flags.js';
import { DNS_SERVER_NODE_FLAGS } from './dns-server-node-flags.js';
import { APP_DIR, NATIVE_MODULES, RUNTIME_FOLDERS } from './layout.js';

export interface ComponentImage {
  /** The image's name (config/'s images: ghcr.io/capi-dns/<name>). */
  name: string;
  /** Its folder of dist/ and of the sources. */
  component: keyof typeof RUNTIME_FOLDERS;
  /** What the component is, for the image's title and the Dockerfile's header. */
  what: string;
  /** dist/ folders loaded at run time. */
  folders: readonly string[];
  /** `node <nodeFlags> <main>`. */
  nodeFlags: readonly string[];
  main: string;
  /** "5353/udp", … */
  ports: string[];
  /** Why the ports are these, for the Dockerfile; none when nothing needs saying. */
  portsNote?: string;
  /** Compiled modules it loads: built by `npm ci`, copied beside the dist/ file that loads them. */
  nativeModules: readonly { from: string; to: string }[];
}

/** The non-root user config/'s manifests run as (runAsNonRoot needs a numeric user). */
export const NONROOT = '65532:65532';

export const COMPONENT_IMAGES: readonly ComponentImage[] = [
  {
    name: 'capi-dns-controller',
    component: 'operator',
    what: 'the management-cluster operator',
    folders: RUNTIME_FOLDERS.operator,
    nodeFlags: OPERATOR_NODE_FLAGS,
    main: 'dist/operator/main.js',
    ports: ['8081/tcp'],
    nativeModules: NATIVE_MODULES.operator,
  },
  {
    name: 'dns-server',
    component: 'dns-server',
    what: 'the authoritative server of each workload cluster',
    folders: RUNTIME_FOLDERS['dns-server'],
    nodeFlags: DNS_SERVER_NODE_FLAGS,
    main: 'dist/dns-server/main.js',
    ports: ['5353/udp', '5353/tcp', '8080/tcp'],
    portsNote: 'It cannot bind port 53: it listens on 5353, and its Service maps 53 to it.',
    nativeModules: NATIVE_MODULES['dns-server'],
  },
];

export { APP_DIR };
