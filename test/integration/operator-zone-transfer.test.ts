// Zone transfer declared on the DNSZone (issue 43, ADR 0216) on real API
// servers: a DNSZone with spec.transfer whose TSIG Secret is missing gets
// TransferReady=False (SecretNotFound) and the zone stays served as it was;
// once the Secret exists, the operator copies the key into the workload
// cluster's Secret capi-dns-tsig-keys, the dns-server there (started with no
// transfer flag) reads it at run time, and an NSD secondary on a loopback
// address of its own takes the zone by AXFR with TSIG.
import { CoreV1Api, CustomObjectsApi, type KubernetesObject } from '@kubernetes/client-node';
import { GROUP, TSIG_KEYS_SECRET, VERSION, type DNSZone } from '../../api/index.js';
import { ensureNamespace } from '../support/capi.js';
import { dig, startDnsServer, type DnsProcess } from '../support/dns.js';
import { apply, eventually, statusCode } from '../support/kube.js';
import { startOperator, type OperatorProcess } from '../support/operator.js';
import { prepareClusters } from '../support/prepare.js';
import { freePortOn, newKey, startNsdSecondary, type Secondary } from '../support/secondaries.js';
import { TestEnv } from '../support/testenv.js';

const ZONE = 'xfr.corp.internal';
const PRIMARY = '127.43.2.1';
const SECONDARY = '127.43.2.2';
const RECORDS_NS = 'capi-dns';
const KEYS_NS = 'dns-admin';
const ZONES = { group: GROUP, version: VERSION, plural: 'dnszones' };

describe('DNSZone spec.transfer: a secondary of its own takes the zone', () => {
  let env: TestEnv;
  let op: OperatorProcess | undefined;
  let dns: DnsProcess | undefined;
  let nsd: Secondary | undefined;
  const key = newKey('xfr-corp-key.');

  const management = () => env.kubeConfig('management');
  const clusterA = () => env.kubeConfig('cluster-a');
  const readZone = async () =>
    (await management()
      .makeApiClient(CustomObjectsApi)
      .getClusterCustomObject({ ...ZONES, name: 'xfr' })) as DNSZone;
  const transferReady = (reason: string, timeoutMs = 20_000) =>
    eventually(async () => {
      const z = await readZone();
      const c = z.status?.conditions?.find((x) => x.type === 'TransferReady');
      if (c?.reason !== reason) throw new Error(`TransferReady ${c?.status}/${c?.reason}: ${c?.message}`);
      return { zone: z, condition: c };
    }, timeoutMs);
  const workloadKeys = async () => {
    try {
      return await clusterA()
        .makeApiClient(CoreV1Api)
        .readNamespacedSecret({ name: TSIG_KEYS_SECRET, namespace: RECORDS_NS });
    } catch (err) {
      if (statusCode(err) === 404) return undefined;
      throw err;
    }
  };
  const servedSerial = async () =>
    Number((await dig(dns!.port, ['+short', ZONE, 'SOA'], PRIMARY)).stdout.trim().split(/\s+/)[2]);

  beforeAll(async () => {
    env = await TestEnv.start({ workloadClusters: ['cluster-a'] });
    await prepareClusters(env, { namespace: 'team', workloads: ['cluster-a'], recordsNamespace: RECORDS_NS });
    await ensureNamespace(management(), KEYS_NS);
    await apply(clusterA(), [
      {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'DNSRecordSet',
        metadata: { name: 'www', namespace: RECORDS_NS },
        spec: { records: [{ name: `www.${ZONE}`, type: 'A', values: ['10.0.43.1'] }] },
      } as KubernetesObject,
    ]);
    const port = await freePortOn(PRIMARY);
    // No --tsig-key-file, no --transfer-secondary: the transfer comes from the DNSZone.
    dns = await startDnsServer([
      '--listen',
      `${PRIMARY}:${port}`,
      '--zone',
      'xcc.test',
      '--kubeconfig',
      env.cluster('cluster-a').kubeconfig,
      '--resync',
      '2s',
      '--soa-retry',
      '2',
    ]);
    op = await startOperator(env.cluster('management').kubeconfig, ['--no-leader-elect']);
  }, 180_000);

  afterAll(async () => {
    await nsd?.stop();
    await op?.stop();
    await dns?.stop();
    await env?.stop();
  }, 60_000);

  it('a missing TSIG Secret: TransferReady=False SecretNotFound, the zone served, no key copied', async () => {
    const nsdPort = await freePortOn(SECONDARY);
    await apply(management(), [
      {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'DNSZone',
        metadata: { name: 'xfr' },
        spec: {
          zone: ZONE,
          transfer: {
            secondaries: [{ address: SECONDARY, port: nsdPort }],
            tsigSecretRef: { namespace: KEYS_NS, name: 'xfr-tsig' },
          },
        },
      } as KubernetesObject,
    ]);
    const { zone, condition } = await transferReady('SecretNotFound');
    expect(condition.status).toBe('False');
    expect(condition.message).toContain(`no Secret ${KEYS_NS}/xfr-tsig`);
    expect(zone.status?.enforced?.transfer).toBeUndefined();
    await eventually(async () => {
      const a = (await dig(dns!.port, ['+short', `www.${ZONE}`, 'A'], PRIMARY)).stdout.trim();
      if (a !== '10.0.43.1') throw new Error(`www.${ZONE}: ${a}`);
    }, 20_000);
    expect(await workloadKeys()).toBeUndefined();
    // Running already: it gets the NOTIFY once the transfer is in force.
    nsd = await startNsdSecondary({
      zone: ZONE,
      primary: { address: PRIMARY, port: dns!.port },
      key,
      address: SECONDARY,
      port: nsdPort,
    });
  }, 60_000);

  it('the Secret created: TransferReady=True, the key copied, NSD takes the zone by AXFR with TSIG', async () => {
    await apply(management(), [
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'xfr-tsig', namespace: KEYS_NS },
        stringData: { name: key.name, algorithm: 'hmac-sha256', secret: key.secret },
      } as KubernetesObject,
    ]);
    const { zone } = await transferReady('Ready');
    expect(zone.status?.enforced?.transfer?.secondaries).toEqual([{ address: SECONDARY, port: nsd!.port }]);
    const copied = await workloadKeys();
    expect(Buffer.from(copied?.data?.[ZONE] ?? '', 'base64').toString()).toContain(`secret "${key.secret}"`);
    // The zone is built again once its key is read (a new serial): NSD follows to the one served now.
    await eventually(async () => expect(await nsd!.serial()).toBe(await servedSerial()), 30_000);
    const fromNsd = await dig(nsd!.port, ['+short', `www.${ZONE}`, 'A'], SECONDARY);
    expect(fromNsd.stdout.trim()).toBe('10.0.43.1');
  }, 60_000);

  it('a Secret made invalid: TransferReady=False SecretInvalid, the transfer in force and the copied key stay', async () => {
    await apply(management(), [
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'xfr-tsig', namespace: KEYS_NS },
        stringData: { name: key.name, algorithm: 'hmac-md5', secret: key.secret },
      } as KubernetesObject,
    ]);
    // Read by name, not watched: seen at the next look (every 15 s while the transfer is in force).
    const { zone } = await transferReady('SecretInvalid', 30_000);
    expect(zone.status?.enforced?.transfer).toBeDefined();
    const copied = await workloadKeys();
    expect(Buffer.from(copied?.data?.[ZONE] ?? '', 'base64').toString()).toContain(`secret "${key.secret}"`);
  }, 60_000);
});
