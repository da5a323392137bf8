// DNSZone spec.dnssec (issue 44, ADR 0106) on real API servers: the operator
// generates the zone's key on the management cluster, puts its DS in
// status.ds and the key into capi-dns-dnssec-keys of the workload cluster; the
// workload cluster's dns-server (started with --zone xcc.test only) serves the
// zone signed, and delv validates its answers with status.ds as the only
// trust anchor. A keySecretRef to a malformed key is refused in status
// (Signed=False, KeyInvalid), status.ds stays, and the answers do not change.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { DNSSEC_KEYS_SECRET, type DNSZone } from '../../api/index.js';
import { ensureNamespace } from '../support/capi.js';
import { apply, eventually } from '../support/kube.js';
import { startOperator, type OperatorProcess } from '../support/operator.js';
import { prepareClusters } from '../support/prepare.js';
import { dig, startDnsServer, type DnsProcess } from '../support/dns.js';
import { delv } from '../support/dnssec.js';
import { TestEnv } from '../support/testenv.js';

const ZONE = 'signed.corp.internal';
const RECORDS = 'capi-dns';
const ZONES = { group: 'connectivity.tanzu.vmware.com', version: 'v1alpha1', plural: 'dnszones' };

describe('DNSZone spec.dnssec: the operator keys the zone, the dns-server signs it', () => {
  let env: TestEnv;
  let op: OperatorProcess | undefined;
  let dns: DnsProcess | undefined;
  const management = () => env.kubeConfig('management');
  const workload = () => env.kubeConfig('cluster-a');
  const readZone = async () =>
    (await management()
      .makeApiClient(CustomObjectsApi)
      .getClusterCustomObject({ ...ZONES, name: 'signed' })) as DNSZone;
  const servedDnskey = async () => (await dig(dns!.port, [ZONE, 'DNSKEY', '+tcp', '+short'])).stdout.trim();
  /** delv with the DS as the zone's only trust anchor (static-ds, BIND 9.18). */
  const validates = async (ds: string, name: string) => {
    const anchor = path.join(dns!.dir, `ds-anchor-${ds.split(' ')[0]}`);
    const [tag, alg, digestType, digest] = ds.split(' ');
    writeFileSync(
      anchor,
      `trust-anchors {\n  ${ZONE}. static-ds ${tag} ${alg} ${digestType} "${digest}";\n};\n`,
    );
    return delv(dns!.port, anchor, ZONE, name, 'A');
  };

  beforeAll(async () => {
    env = await TestEnv.start({ workloadClusters: ['cluster-a'] });
    await prepareClusters(env, { namespace: 'team-a', workloads: ['cluster-a'], recordsNamespace: RECORDS });
    await ensureNamespace(management(), 'capi-dns-system');
    await apply(workload(), [
      {
        apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
        kind: 'DNSRecordSet',
        metadata: { name: 'www', namespace: RECORDS },
        spec: { records: [{ name: `www.${ZONE}`, type: 'A', values: ['10.0.7.1'] }] },
      } as KubernetesObject,
    ]);
    dns = await startDnsServer([
      '--zone',
      'xcc.test',
      '--kubeconfig',
      env.cluster('cluster-a').kubeconfig,
      '--resync',
      '2s',
    ]);
    op = await startOperator(env.cluster('management').kubeconfig, ['--no-leader-elect']);
  }, 180_000);

  afterAll(async () => {
    await op?.stop();
    await dns?.stop();
    await env?.stop();
  }, 60_000);

  let ds = '';

  it('generates the key, puts the DS in status.ds, and the dns-server answers DO queries that delv validates', async () => {
    await apply(management(), [
      {
        apiVersion: 'connectivity.tanzu.vmware.com/v1alpha1',
        kind: 'DNSZone',
        metadata: { name: 'signed' },
        spec: { zone: ZONE, dnssec: { enabled: true } },
      } as KubernetesObject,
    ]);
    const zone = await eventually(async () => {
      const z = await readZone();
      if (!z.status?.ds?.length) throw new Error(`no status.ds: ${JSON.stringify(z.status)}`);
      return z;
    }, 20_000);
    ds = zone.status!.ds![0]!;
    expect(ds).toMatch(/^\d+ 13 2 [0-9A-F]{64}$/);
    expect(zone.status?.conditions?.find((c) => c.type === 'Signed')).toMatchObject({
      status: 'True',
      reason: 'Signed',
    });
    // Generated once, on the management cluster, labelled with its DNSZone.
    const secret = await management()
      .makeApiClient(CoreV1Api)
      .readNamespacedSecret({ namespace: 'capi-dns-system', name: 'signed-dnssec' });
    expect(secret.metadata?.labels?.['connectivity.tanzu.vmware.com/dnszone']).toBe('signed');
    // Copied into the workload cluster's one key Secret.
    const copy = await workload()
      .makeApiClient(CoreV1Api)
      .readNamespacedSecret({ namespace: RECORDS, name: DNSSEC_KEYS_SECRET });
    expect(copy.data?.[`${ZONE}.pem`]).toBe(secret.data?.['key.pem']);

    const dnskey = await eventually(async () => {
      const k = await servedDnskey();
      if (!k) throw new Error('no DNSKEY served yet');
      return k;
    }, 30_000);
    // BIND computes the same DS from the DNSKEY the dns-server serves.
    const keyFile = path.join(dns!.dir, 'dnskey.db');
    writeFileSync(keyFile, `${ZONE}. 3600 IN DNSKEY ${dnskey}\n`);
    const bind = execFileSync('dnssec-dsfromkey', ['-2', '-f', keyFile, ZONE], { encoding: 'utf8' });
    expect(bind.trim().split(/\s+/).slice(3).join(' ')).toBe(ds);
    const signed = await dig(dns!.port, [`www.${ZONE}`, 'A', '+dnssec', '+tcp']);
    expect(signed.stdout).toContain('RRSIG');
    const r = await validates(ds, `www.${ZONE}`);
    expect(r.output).toContain('10.0.7.1');
    expect(r.validated).toBe(true);
    const nx = await validates(ds, `nothing.${ZONE}`);
    expect(nx.negative).toBe(true);
  });

  it('keeps the generated key across a restart of the operator: the same DS', async () => {
    await op?.stop();
    op = await startOperator(env.cluster('management').kubeconfig, ['--no-leader-elect']);
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await readZone()).status?.ds).toEqual([ds]);
    expect(op.logs.some((l) => l.includes('DNSSEC key generated'))).toBe(false);
  });

  it('a malformed key is refused in status; status.ds and the answers stay', async () => {
    await apply(management(), [
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'bad-key', namespace: 'capi-dns-system' },
        stringData: { 'key.pem': '-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n' },
      } as KubernetesObject,
    ]);
    const before = await servedDnskey();
    await management()
      .makeApiClient(CustomObjectsApi)
      .patchClusterCustomObject(
        {
          ...ZONES,
          name: 'signed',
          body: { spec: { dnssec: { keySecretRef: { namespace: 'capi-dns-system', name: 'bad-key' } } } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    const zone = await eventually(async () => {
      const z = await readZone();
      const c = z.status?.conditions?.find((c) => c.type === 'Signed');
      if (c?.reason !== 'KeyInvalid') throw new Error(`Signed: ${JSON.stringify(c)}`);
      return z;
    }, 20_000);
    expect(zone.status?.conditions?.find((c) => c.type === 'Signed')?.status).toBe('False');
    expect(zone.status?.ds).toEqual([ds]);
    // A few resyncs of the dns-server later, still signed with the key it had.
    await new Promise((r) => setTimeout(r, 5_000));
    expect(await servedDnskey()).toBe(before);
    const r = await validates(ds, `www.${ZONE}`);
    expect(r.validated).toBe(true);
  });

  it('signing turned off: no DS, the key Secret leaves the workload cluster, the zone is served unsigned', async () => {
    await management()
      .makeApiClient(CustomObjectsApi)
      .patchClusterCustomObject(
        { ...ZONES, name: 'signed', body: { spec: { dnssec: { enabled: false } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    await eventually(async () => {
      const z = await readZone();
      if (z.status?.ds?.length || z.status?.conditions?.some((c) => c.type === 'Signed'))
        throw new Error(`still signed: ${JSON.stringify(z.status)}`);
    }, 20_000);
    await eventually(async () => {
      const list = await workload()
        .makeApiClient(CoreV1Api)
        .listNamespacedSecret({ namespace: RECORDS, fieldSelector: `metadata.name=${DNSSEC_KEYS_SECRET}` });
      if (list.items.length) throw new Error('key Secret still in the workload cluster');
    }, 20_000);
    await eventually(async () => {
      if (await servedDnskey()) throw new Error('still serving a DNSKEY');
    }, 20_000);
    expect((await dig(dns!.port, [`www.${ZONE}`, 'A', '+short'])).stdout.trim()).toBe('10.0.7.1');
  });
});
