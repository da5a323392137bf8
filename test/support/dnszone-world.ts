// The world a DNSZone test starts from: a management cluster and one workload
// cluster (cluster-a) on real API servers, prepared as every multi-cluster test
// is, a namespace on the management cluster for the Secrets of keys, records
// in cluster-a's namespace capi-dns (the dns-server's default, where the
// operator copies the keys too), cluster-a's dns-server (started with --zone xcc.test only, so
// the DNSZone's zone reaches it through the operator) and the operator. Ways
// to write and read the DNSZones and the key Secrets; stop() ends all of it,
// and a start that fails half way ends what it had started.
import { CustomObjectsApi, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import {
  DEFAULT_RECORDS_NAMESPACE,
  GROUP,
  VERSION,
  type Condition,
  type DNSRecord,
  type DNSZone,
  type DNSZoneSpec,
} from '../../api/index.js';
import { ensureNamespace } from './capi.js';
import { startDnsServer, type DnsProcess } from './dns.js';
import { apply, eventually } from './kube.js';
import { startOperator, type OperatorProcess } from './operator.js';
import { prepareClusters } from './prepare.js';
import { TestEnv } from './testenv.js';

const WORKLOAD = 'cluster-a';
const DNS_ZONES = { group: GROUP, version: VERSION, plural: 'dnszones' };

export interface DnsZoneWorldOptions {
  /** The management namespace cluster-a is registered in; "team" by default. */
  teamNamespace?: string;
  /** The management namespace the Secrets of keys (TSIG, DNSSEC) live in. */
  keysNamespace: string;
  /** cluster-a's records, as one DNSRecordSet. */
  records: DNSRecord[];
  /** The dns-server's flags besides --zone xcc.test, --kubeconfig and --resync 2s (a --listen, say). */
  dnsServerArgs?: string[];
}

export interface DnsZoneWorld {
  env: TestEnv;
  /** cluster-a's dns-server. */
  dns: DnsProcess;
  /** The operator running now (restartOperator starts another). */
  operator: OperatorProcess;
  management(): KubeConfig;
  workload(): KubeConfig;
  /** Creates or updates the cluster-scoped DNSZone `name`. */
  applyZone(name: string, spec: DNSZoneSpec): Promise<void>;
  readZone(name: string): Promise<DNSZone>;
  /** Waits until the DNSZone's condition `type` has `reason`. */
  conditionReason(
    name: string,
    type: string,
    reason: string,
    timeoutMs?: number,
  ): Promise<{ zone: DNSZone; condition: Condition }>;
  /** Creates or updates the Secret `name` of the keys namespace. */
  applyKeySecret(name: string, stringData: Record<string, string>): Promise<void>;
  /** Stops the operator and starts a new one (a restart, or an upgrade). */
  restartOperator(): Promise<void>;
  stop(): Promise<void>;
}

export async function startDnsZoneWorld(opts: DnsZoneWorldOptions): Promise<DnsZoneWorld> {
  const env = await TestEnv.start({ workloadClusters: [WORKLOAD] });
  let dns: DnsProcess | undefined;
  let operator: OperatorProcess | undefined;
  const stop = async () => {
    await operator?.stop();
    await dns?.stop();
    await env.stop();
  };
  const management = () => env.kubeConfig('management');
  const workload = () => env.kubeConfig(WORKLOAD);
  const startOurOperator = () => startOperator(env.cluster('management').kubeconfig, ['--no-leader-elect']);
  try {
    await prepareClusters(env, {
      namespace: opts.teamNamespace ?? 'team',
      workloads: [WORKLOAD],
      recordsNamespace: DEFAULT_RECORDS_NAMESPACE,
    });
    await ensureNamespace(management(), opts.keysNamespace);
    await apply(workload(), [
      {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'DNSRecordSet',
        metadata: { name: 'records', namespace: DEFAULT_RECORDS_NAMESPACE },
        spec: { records: opts.records },
      } as KubernetesObject,
    ]);
    dns = await startDnsServer([
      ...(opts.dnsServerArgs ?? []),
      '--zone',
      'xcc.test',
      '--kubeconfig',
      env.cluster(WORKLOAD).kubeconfig,
      '--resync',
      '2s',
    ]);
    operator = await startOurOperator();
  } catch (err) {
    await stop();
    throw err;
  }

  const readZone = async (name: string) =>
    (await management()
      .makeApiClient(CustomObjectsApi)
      .getClusterCustomObject({ ...DNS_ZONES, name })) as DNSZone;
  const world: DnsZoneWorld = {
    env,
    dns,
    operator,
    management,
    workload,
    applyZone: async (name, spec) => {
      await apply(management(), [
        { apiVersion: `${GROUP}/${VERSION}`, kind: 'DNSZone', metadata: { name }, spec } as KubernetesObject,
      ]);
    },
    readZone,
    conditionReason: (name, type, reason, timeoutMs = 20_000) =>
      eventually(async () => {
        const zone = await readZone(name);
        const condition = zone.status?.conditions?.find((c) => c.type === type);
        if (condition?.reason !== reason)
          throw new Error(`${type} ${condition?.status}/${condition?.reason}: ${condition?.message}`);
        return { zone, condition };
      }, timeoutMs),
    applyKeySecret: async (name, stringData) => {
      await apply(management(), [
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name, namespace: opts.keysNamespace },
          stringData,
        } as KubernetesObject,
      ]);
    },
    restartOperator: async () => {
      await operator?.stop();
      operator = undefined;
      operator = await startOurOperator();
      world.operator = operator;
    },
    stop,
  };
  return world;
}
