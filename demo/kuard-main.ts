// The kuard stand-in as a program of its own, for the kuard image
// (`npm run images`): the same answer as the demo's in-process kuard, on
// kuard's own port 8080 (a non-root container cannot bind 80; the Service maps
// 80 to it). Usage: node dist/demo/kuard-main.js [--listen HOST:PORT] [--cluster NAME]
// The name in the answer comes from --cluster, else $KUARD_CLUSTER, else the
// host name (the pod's name).
import os from 'node:os';
import { startKuard } from './kuard.js';

const USAGE = 'usage: kuard-main.js [--listen HOST:PORT] [--cluster NAME]\n';

function parse(argv: string[]): { host: string; port: number; cluster: string } {
  let listen = ':8080';
  let cluster = process.env.KUARD_CLUSTER || os.hostname();
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split(/=(.*)/s, 2);
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === '') throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === '--listen') listen = value();
    else if (flag === '--cluster') cluster = value();
    else throw new Error(`unknown flag ${argv[i]}`);
  }
  const colon = listen.lastIndexOf(':');
  const port = Number(listen.slice(colon + 1));
  if (colon < 0 || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`--listen ${listen}: want HOST:PORT or :PORT`);
  }
  return { host: listen.slice(0, colon).replace(/^\[|\]$/g, '') || '0.0.0.0', port, cluster };
}

let flags: ReturnType<typeof parse>;
try {
  flags = parse(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`kuard: ${(err as Error).message}\n${USAGE}`);
  process.exit(2);
}
const kuard = await startKuard(flags.host, flags.cluster, flags.port);
process.stderr.write(
  `${JSON.stringify({ msg: 'kuard listening', url: kuard.url, cluster: flags.cluster })}\n`,
);
// PID 1 of a container gets no default signal handling: without these a pod
// would take its whole grace period to stop.
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => void kuard.close().finally(() => process.exit(0)));
}
