// npm run demo: the walkthrough on this machine, step by step. Stays up for
// the user to try things until Ctrl-C; --once stops after the curl and exits
// 0 only if it succeeded (for scripts and CI). --pods runs it with real pods
// on real nodes; without, the operator, dns-servers and CoreDNS are local
// processes (for machines where nodes cannot run).
import { parseArgs } from 'node:util';
import { PodWalkthrough } from './pods.js';
import { Interrupted, printProgress, StepError } from './steps.js';
import {
  addressesFor,
  KUARD_NAME,
  KUARD_SHARED_NAME,
  MANAGEMENT,
  NAMESPACE,
  Walkthrough,
  type FailoverTimes,
} from './walkthrough.js';

const HELP = `Usage: npm run demo [-- --pods] [-- --failover] [-- --outside] [-- --once] [-- --address-prefix 127.0.10]

Runs the capi-dns walkthrough on this machine (as root).

  --pods             with real pods: every cluster gets a node (containerd, kubelet,
                     kube-proxy in a network namespace), the images of "npm run images"
                     are built if missing and loaded on the nodes, and config/ and
                     examples/ are applied as examples/README.md says
  (without --pods)   the operator, dns-servers and CoreDNS as local processes: binds
                     port 53 and 80 on loopback addresses and uses a private mount
                     namespace for the "pod" resolver
  --failover         then failover between clusters (examples/README.md): kuard in cluster-c
                     too, tiers cluster-a then cluster-c; cluster-a's kuard stopped, the curl
                     from cluster-b answered by cluster-c's within seconds, and back
  --outside          the zone beyond the fleet (without --pods): every cluster's dns-server exposed,
                     a DNSZone with spec.nameservers.expose and spec.transfer, an NSD secondary on
                     the host (the company's DNS, taking the zone by transfer with TSIG) and an
                     unbound asking it, curl from the host by name; with --failover, the failover
                     seen from the host too
  --once             run the steps, print the response, stop everything
  --address-prefix   the 127.x.y prefix of the loopback addresses, without --pods
                     (default 127.0.10)
  --help             this text
`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      pods: { type: 'boolean', default: false },
      once: { type: 'boolean', default: false },
      failover: { type: 'boolean', default: false },
      outside: { type: 'boolean', default: false },
      'address-prefix': { type: 'string', default: '127.0.10' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (values.pods && values.outside) {
    process.stderr.write('--outside runs without --pods (the local processes)\n');
    return 2;
  }
  return values.pods
    ? runPods(values.once, values.failover)
    : runProcesses(values.once, values['address-prefix'], values.failover, values.outside);
}

function failoverLine(times: FailoverTimes, stopped: string, started: string): string {
  const outside =
    times.outsideFailoverMs === undefined
      ? ''
      : `From the host, through the resolver outside every cluster: cluster-c's in ${times.outsideFailoverMs} ms; cluster-a's again in ${times.outsideRecoveryMs} ms\n`;
  return `Failover: cluster-a's kuard ${stopped} → cluster-b's curl of ${KUARD_SHARED_NAME} answered by cluster-c's in ${times.failoverMs} ms; ${started} → by cluster-a's in ${times.recoveryMs} ms\n${outside}\n`;
}

function untilSignal(): Promise<void> {
  return new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
}

async function runProcesses(
  once: boolean,
  addressPrefix: string,
  failover: boolean,
  outside: boolean,
): Promise<number> {
  const addresses = addressesFor(addressPrefix);
  let walkthrough: Walkthrough;
  try {
    walkthrough = await Walkthrough.run({ addresses, progress: printProgress, failover, outside });
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
    const host = walkthrough.outsideHost;
    if (host)
      process.stdout.write(
        `$ curl http://${KUARD_NAME}   # from the host, through unbound on ${addresses.outsideResolver} asking the NSD secondary on ${addresses.outsideSecondary}, outside every cluster\n${await host.curl(`http://${KUARD_NAME}`)}\n`,
      );
    const times = walkthrough.failoverTimes;
    if (times) process.stdout.write(failoverLine(times, 'stopped', 'started again'));
    if (once) return 0;
    const env = walkthrough.env?.info;
    const kubeconfig = (name: string) => env?.clusters.find((c) => c.name === name)?.kubeconfig ?? '';
    process.stdout.write(`The walkthrough is up. Try:
  ${walkthrough.managementKubectl().line(['-n', NAMESPACE, 'get', 'gatewaydns,clusters'])}
  kubectl --kubeconfig ${kubeconfig('cluster-b')} -n capi-dns get dnsrecordsets -o yaml
  kubectl --kubeconfig ${kubeconfig('cluster-b')} -n kube-system get configmap coredns -o yaml
  dig @${addresses.coreDns['cluster-b']} ${KUARD_NAME}
  dig @${addresses.coreDns['cluster-b']} ${KUARD_SHARED_NAME}
  ${pod.shell(`curl http://${KUARD_NAME}`)}${
    host
      ? `
  ${walkthrough.managementKubectl().line(['get', 'dnszone', 'xcc-test', '-o', 'jsonpath={.status.parentRecords}'])}   # what the parent zone needs
  ${walkthrough.managementKubectl().line(['get', 'dnszone', 'xcc-test', '-o', 'jsonpath={.status.nameservers}'])}   # each cluster's NS, glue and serial
  dig @${addresses.outsideSecondary} xcc.test SOA   # the NSD secondary: the serial it took by transfer
  dig @${addresses.outsideResolver} ${KUARD_NAME}   # the resolver outside every cluster, asking the secondary
  dig @${addresses.dnsServer['cluster-a']} xcc.test NS   # an exposed dns-server
  ${host.shell(`curl http://${KUARD_NAME}`)}`
      : ''
  }${
    times
      ? `
  ${walkthrough.managementKubectl().line(['-n', NAMESPACE, 'get', 'gatewaydns', '-o', 'wide'])}   # Degraded
  ${walkthrough.managementKubectl().line(['-n', NAMESPACE, 'get', 'gatewaydns', 'dev-team-gateway-dns', '-o', 'jsonpath={.status.clusters[*].health}'])}`
      : ''
  }
kubectl is ${walkthrough.managementKubectl().binary}; logs are in ${walkthrough.logDir}
Press Ctrl-C to stop everything.
`);
    await untilSignal();
    process.stdout.write('\nstopping ...\n');
    return 0;
  } finally {
    await walkthrough.stop();
  }
}

async function runPods(once: boolean, failover: boolean): Promise<number> {
  // From the start: Ctrl-C during a step must still stop the nodes (their
  // containers, mounts, network namespaces and links) before we exit.
  const interrupt = new AbortController();
  const interrupted = new Promise<void>((resolve) => {
    const onSignal = () => {
      if (interrupt.signal.aborted) {
        process.stdout.write('still stopping the nodes (containers, mounts, network namespaces) ...\n');
        return;
      }
      process.stdout.write('\nstopping ...\n');
      interrupt.abort();
      resolve();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  let w: PodWalkthrough;
  try {
    w = await PodWalkthrough.run({
      progress: printProgress,
      signal: interrupt.signal,
      keepLogsOnFailure: true,
      failover,
    });
  } catch (err) {
    if (err instanceof Interrupted) return 130;
    if (err instanceof StepError) {
      process.stderr.write(`\n${err.message}\n`);
      return 1;
    }
    throw err;
  }
  try {
    // Shown as the README types it; run with -sS, as the pod's log holds curl's stderr too (its progress meter).
    const args = w.curlArgs('kuard-test', []);
    const response = await w.curlFromClusterB('kuard-test', ['-sS']);
    const b = w.kubectl('cluster-b');
    process.stdout.write(`\n$ ${b.line(args)}\n${response}\n`);
    if (w.failoverTimes) process.stdout.write(failoverLine(w.failoverTimes, 'scaled to 0', 'scaled back'));
    if (once) return 0;
    const env = w.requireEnv();
    const node = env.node('cluster-b');
    const m = w.kubectl(MANAGEMENT);
    process.stdout.write(`The walkthrough is up, with real pods. Try:
  ${m.line(['-n', NAMESPACE, 'get', 'gatewaydns,clusters'])}
  ${m.line(['-n', 'capi-dns-system', 'logs', 'deployment/capi-dns-controller'])}
  ${b.line(['get', 'pods', '-A', '-o', 'wide'])}
  ${b.line(['-n', 'capi-dns', 'get', 'dnsrecordsets', '-o', 'yaml'])}
  ${b.line(['-n', 'kube-system', 'get', 'configmap', 'coredns', '-o', 'yaml'])}
  ip netns exec ${node.netns} dig @${node.dnsIP} ${KUARD_NAME}   # cluster-b's kube-dns Service, from its node
  ${b.line(w.curlArgs('kuard-test', []))}
kubectl is ${b.binary}; the nodes' and pods' logs are below ${env.info.dir}/*/node/
Press Ctrl-C to stop everything.
`);
    await interrupted;
    return 0;
  } catch (err) {
    if (interrupt.signal.aborted) return 130;
    throw err;
  } finally {
    await w.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`demo: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
