// `npm run conformance:mcs`: the Multi-Cluster Services conformance suite of
// SIG Multicluster (../shared/mcs-api-conformance, or MCS_CONFORMANCE_DIR;
// not ours, never edited) against capi-dns installed as a user installs it.
// The test environment with real nodes (testenv --nodes) runs a management
// cluster and MCS_CLUSTERS (default 2) member clusters, each with CoreDNS as
// kubeadm runs it; capi-dns comes from config/default and config/workload
// (image overlays pointing at `npm run images`); the clusters are Cluster API
// Clusters of one management namespace labelled as ClusterSet "conformance".
// The suite's two images (alpine/socat, nicolaka/netshoot) are served by no
// registry here: local Debian builds of the same tools stand in for them
// (scripts/images, "mcs-socat" and "mcs-netshoot"). Every spec runs, Required
// and Optional. report.yaml and report.html stay in a folder whose report.yaml
// path is the last line printed; the exit code is the suite's. Everything
// started is stopped, also when the suite fails. Needs root.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import { Kubectl } from '../../demo/kubectl.js';
import { installCoreDns, installDnsServers, installOperator, type NodeInstall } from '../../demo/install.js';
import { registerWorkloadCluster } from '../support/capi.js';
import { buildImages } from '../support/images.js';
import { eventually, installCrds, readManifests } from '../support/kube.js';
import { requireRootForNodes, startWithNodes } from '../support/nodes.js';
import { binPath, repoRoot } from '../support/paths.js';
import type { TestEnv } from '../support/testenv.js';

const execFileAsync = promisify(execFile);
const MANAGEMENT = 'management';
const NAMESPACE = 'mcs-conformance';
const CLUSTERSET = 'conformance';
const WAIT = '180s';

function say(text: string): void {
  process.stderr.write(`conformance:mcs: ${text}\n`);
}

async function main(): Promise<number> {
  requireRootForNodes();
  const root = repoRoot();
  const suiteDir = findSuite(root);
  const count = Number(process.env.MCS_CLUSTERS ?? '2');
  if (!Number.isInteger(count) || count < 2 || count > 5)
    throw new Error(`MCS_CLUSTERS=${process.env.MCS_CLUSTERS}: want 2 to 5 member clusters`);
  const members = Array.from({ length: count }, (_, i) => `cluster-${String.fromCharCode(97 + i)}`);
  const cache = path.join(root, '.cache', 'mcs-conformance');
  mkdirSync(cache, { recursive: true });
  const reports = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-mcs-conformance-'));
  const work = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-mcs-work-'));

  say(`building the suite from ${suiteDir} (go test -c) and the images`);
  const binary = path.join(cache, 'mcs-conformance.test');
  // The suite is built where it is, its binary written to our cache: nothing is added to its folder.
  const [, images] = await Promise.all([
    execFileAsync('go', ['test', '-c', '-o', binary, '.'], {
      cwd: suiteDir,
      maxBuffer: 16 * 1024 * 1024,
      env: { ...process.env, GOFLAGS: '-mod=mod' },
    }),
    buildImages(),
  ]);

  let env: TestEnv | undefined;
  const stopAll = async () => {
    await env?.stop();
    rmSync(work, { recursive: true, force: true });
  };
  const onSignal = () => void stopAll().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    say(`starting the management cluster and ${members.join(', ')} with a node each`);
    ({ env } = await startWithNodes(members, images));
    const e = env;
    const kubectl = (cluster: string) => new Kubectl(binPath('kubectl'), e.cluster(cluster).kubeconfig);

    const install: NodeInstall = { dir: work, env: e, images, kubectl, wait: WAIT };
    say('CoreDNS in each member cluster, as kubeadm runs it');
    await installCoreDns(install, members);

    say(`Cluster API Clusters in management namespace ${NAMESPACE}, labelled as ClusterSet ${CLUSTERSET}`);
    const management = e.kubeConfig(MANAGEMENT);
    await installCrds(management, readManifests(path.join(root, 'test', 'fixtures')));
    for (const cluster of members)
      await registerWorkloadCluster(management, {
        namespace: NAMESPACE,
        cluster,
        kubeconfigPath: e.node(cluster).kubeconfig,
      });
    await kubectl(MANAGEMENT).run([
      'label',
      'namespace',
      NAMESPACE,
      `multicluster.x-k8s.io/clusterset=${CLUSTERSET}`,
      '--overwrite',
    ]);

    say(
      'kubectl apply -k config/default (management); the workload side by ClusterResourceSet (each member)',
    );
    await installOperator(install, MANAGEMENT);
    await installDnsServers(install, MANAGEMENT, NAMESPACE, members);

    say(
      'waiting for every CoreDNS to forward clusterset.local (kubelet refreshes its ConfigMap within a minute)',
    );
    for (const cluster of members)
      await eventually(
        async () => {
          const { stdout } = await execFileAsync('dig', [
            `@${e.node(cluster).dnsIP}`,
            '+time=1',
            '+tries=1',
            'clusterset.local',
            'SOA',
          ]);
          if (!/status: NOERROR/.test(stdout) || !/ns1\.clusterset\.local\./.test(stdout))
            throw new Error(`${cluster}: CoreDNS does not forward clusterset.local yet:\n${stdout}`);
        },
        180_000,
        2_000,
      );

    // One kubeconfig with a context per member, named after it: the suite's --contexts.
    const kubeconfig = path.join(work, 'kubeconfig');
    writeFileSync(kubeconfig, mergedKubeconfig(members.map((c) => [c, e.cluster(c).kubeconfig])));

    say(`running ${binary} against ${members.join(', ')}; reports in ${reports}`);
    const code = await new Promise<number>((resolve, reject) => {
      const child = spawn(
        binary,
        [
          `--kubeconfig=${kubeconfig}`,
          `--contexts=${members.join(',')}`,
          '--organization=capi-dns',
          '--project=capi-dns',
          `--version=${(JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version}`,
          '--url=https://github.com/capi-dns/capi-dns',
          '-ginkgo.v',
          '-ginkgo.no-color',
        ],
        { cwd: reports, stdio: ['ignore', 'inherit', 'inherit'] },
      );
      child.once('error', reject);
      child.once('exit', (c, signal) => resolve(c ?? (signal ? 128 : 1)));
    });
    return code;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await stopAll();
    const report = path.join(reports, 'report.yaml');
    process.stdout.write(`${existsSync(report) ? report : `${report} (not written)`}\n`);
  }
}

/**
 * MCS_CONFORMANCE_DIR, else ../shared/mcs-api-conformance beside the repository, else beside the
 * repository it was cloned from when that is a local folder (a CI clone of a local checkout).
 */
function findSuite(root: string): string {
  if (process.env.MCS_CONFORMANCE_DIR) return path.resolve(process.env.MCS_CONFORMANCE_DIR);
  const candidates = [path.join(root, '..', 'shared', 'mcs-api-conformance')];
  try {
    const origin = execFileSync('git', ['-C', root, 'config', '--get', 'remote.origin.url'], {
      encoding: 'utf8',
    }).trim();
    if (origin && path.isAbsolute(origin))
      candidates.push(path.join(origin, '..', 'shared', 'mcs-api-conformance'));
  } catch {
    // Not a git checkout, or no origin: only the folder beside this one.
  }
  const found = candidates.find((dir) => existsSync(path.join(dir, 'conformance_suite.go')));
  if (!found)
    throw new Error(`no MCS conformance suite in ${candidates.join(' or ')}: set MCS_CONFORMANCE_DIR`);
  return path.resolve(found);
}

/** The members' kubeconfigs as one, each cluster, user and context named after its cluster. */
function mergedKubeconfig(files: [string, string][]): string {
  type Named = { name: string; [k: string]: unknown };
  const merged = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [] as Named[],
    users: [] as Named[],
    contexts: [] as Named[],
  };
  for (const [name, file] of files) {
    const kc = parse(readFileSync(file, 'utf8')) as { clusters: Named[]; users: Named[]; contexts: Named[] };
    const context = kc.contexts[0] as { context: { cluster: string; user: string } } & Named;
    const cluster = kc.clusters.find((c) => c.name === context.context.cluster);
    const user = kc.users.find((u) => u.name === context.context.user);
    if (!cluster || !user) throw new Error(`${file}: its first context names no cluster or user in it`);
    merged.clusters.push({ ...cluster, name });
    merged.users.push({ ...user, name });
    merged.contexts.push({ name, context: { cluster: name, user: name } });
  }
  return stringify({ ...merged, 'current-context': files[0]?.[0] });
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(
      `conformance:mcs: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  },
);
