// npm run demo: the walkthrough on this machine, step by step. Stays up for
// the user to try things until Ctrl-C; --once stops after the curl and exits
// 0 only if it succeeded (for scripts and CI).
import { parseArgs } from 'node:util';
import { printProgress, StepError } from './steps.js';
import { addressesFor, KUARD_NAME, NAMESPACE, Walkthrough } from './walkthrough.js';

const HELP = `Usage: npm run demo [-- --once] [-- --address-prefix 127.0.10]

Runs the capi-dns walkthrough on this machine (needs root: it binds port 53
and 80 on loopback addresses and uses a private mount namespace for the
"pod" resolver).

  --once             run the steps, print the response, stop everything
  --address-prefix   the 127.x.y prefix of the loopback addresses (default 127.0.10)
  --help             this text
`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      once: { type: 'boolean', default: false },
      'address-prefix': { type: 'string', default: '127.0.10' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const addresses = addressesFor(values['address-prefix']);
  let walkthrough: Walkthrough;
  try {
    walkthrough = await Walkthrough.run({ addresses, progress: printProgress });
  } catch (err) {
    if (err instanceof StepError) {
      process.stderr.write(`\n${err.message}\n`);
      return 1;
    }
    throw err;
  }
  try {
    const pod = walkthrough.workload('cluster-b').pod;
    const response = await pod.curl(`http://${KUARD_NAME}`);
    process.stdout.write(`\n$ curl http://${KUARD_NAME}   # from a pod in cluster-b\n${response}\n`);
    if (values.once) return 0;
    const env = walkthrough.env?.info;
    const kubeconfig = (name: string) => env?.clusters.find((c) => c.name === name)?.kubeconfig ?? '';
    process.stdout.write(`The walkthrough is up. Try:
  ${walkthrough.managementKubectl().line(['-n', NAMESPACE, 'get', 'gatewaydns,clusters'])}
  kubectl --kubeconfig ${kubeconfig('cluster-b')} -n capi-dns get dnsrecordsets -o yaml
  kubectl --kubeconfig ${kubeconfig('cluster-b')} -n kube-system get configmap coredns -o yaml
  dig @${addresses.coreDns['cluster-b']} ${KUARD_NAME}
  dig @${addresses.coreDns['cluster-b']} kuard.gateway.${NAMESPACE}.clusters.xcc.test
  ${pod.shell(`curl http://${KUARD_NAME}`)}
kubectl is ${walkthrough.managementKubectl().binary}; logs are in ${walkthrough.logDir}
Press Ctrl-C to stop everything.
`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    process.stdout.write('\nstopping ...\n');
    return 0;
  } finally {
    await walkthrough.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`demo: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
