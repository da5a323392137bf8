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
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { DEFAULT_RECORDS_NAMESPACE, DNSSEC_KEYS_SECRET, GROUP, VERSION } from '../../api/index.js';
import { eventually } from '../support/kube.js';
import { dig } from '../support/dns.js';
import { delv } from '../support/dnssec.js';
import { startDnsZoneWorld, type DnsZoneWorld } from '../support/dnszone-world.js';

const ZONE = 'signed.corp.internal';
const RECORDS = DEFAULT_RECORDS_NAMESPACE;
const KEYS = 'capi-dns-system';
const ZONES = { group: GROUP, version: VERSION, plural: 'dnszones' };

describe('DNSZone spec.dnssec: the operator keys the zone, the dns-server signs it', () => {
  let world: DnsZoneWorld | undefined;
  const w = () => world!;
  const management = () => w().management();
  const workload = () => w().workload();
  const readZone = () => w().readZone('signed');
  const patchZone = (spec: Record<string, unknown>) =>
    management()
      .makeApiClient(CustomObjectsApi)
      .patchClusterCustomObject(
        { ...ZONES, name: 'signed', body: { spec } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
  const servedDnskey = async () =>
    (await dig(w().dns.port, [ZONE, 'DNSKEY', '+tcp', '+short'])).stdout.trim();
  /** delv with the DS as the zone's only trust anchor (static-ds, BIND 9.18). */
  const validates = async (ds: string, name: string) => {
    const anchor = path.join(w().dns.dir, `ds-anchor-${ds.split(' ')[0]}`);
    const [tag, alg, digestType, digest] = ds.split(' ');
    writeFileSync(
      anchor,
      `trust-anchors {\n  ${ZONE}. static-ds ${tag} ${alg} ${digestType} "${digest}";\n};\n`,
    );
    return delv(w().dns.port, anchor, ZONE, name, 'A');
  };

  beforeAll(async () => {
    world = await startDnsZoneWorld({
      keysNamespace: KEYS,
      records: [{ name: `www.${ZONE}`, type: 'A', values: ['10.0.7.1'] }],
    });
  }, 180_000);

  afterAll(async () => {
    await world?.stop();
  }, 60_000);

  let ds = '';

  it('generates the key, puts the DS in status.ds, and the dns-server answers DO queries that delv validates', async () => {
    await w().applyZone('signed', { zone: ZONE, dnssec: { enabled: true } });
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
      .readNamespacedSecret({ namespace: KEYS, name: 'signed-dnssec' });
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
    const keyFile = path.join(w().dns.dir, 'dnskey.db');
    writeFileSync(keyFile, `${ZONE}. 3600 IN DNSKEY ${dnskey}\n`);
    const bind = execFileSync('dnssec-dsfromkey', ['-2', '-f', keyFile, ZONE], { encoding: 'utf8' });
    expect(bind.trim().split(/\s+/).slice(3).join(' ')).toBe(ds);
    const signed = await dig(w().dns.port, [`www.${ZONE}`, 'A', '+dnssec', '+tcp']);
    expect(signed.stdout).toContain('RRSIG');
    const r = await validates(ds, `www.${ZONE}`);
    expect(r.output).toContain('10.0.7.1');
    expect(r.validated).toBe(true);
    const nx = await validates(ds, `nothing.${ZONE}`);
    expect(nx.negative).toBe(true);
  });

  it('keeps the generated key across a restart of the operator: the same DS', async () => {
    await w().restartOperator();
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await readZone()).status?.ds).toEqual([ds]);
    expect(w().operator.logs.some((l) => l.includes('DNSSEC key generated'))).toBe(false);
  });

  it('a malformed key is refused in status; status.ds and the answers stay', async () => {
    await w().applyKeySecret('bad-key', {
      'key.pem': '-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n',
    });
    const before = await servedDnskey();
    await patchZone({ dnssec: { keySecretRef: { namespace: KEYS, name: 'bad-key' } } });
    const { zone, condition } = await w().conditionReason('signed', 'Signed', 'KeyInvalid');
    expect(condition.status).toBe('False');
    expect(zone.status?.ds).toEqual([ds]);
    // A few resyncs of the dns-server later, still signed with the key it had.
    await new Promise((r) => setTimeout(r, 5_000));
    expect(await servedDnskey()).toBe(before);
    const r = await validates(ds, `www.${ZONE}`);
    expect(r.validated).toBe(true);
  });

  it('signing turned off: no DS, the key Secret leaves the workload cluster, the zone is served unsigned', async () => {
    await patchZone({ dnssec: { enabled: false } });
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
    expect((await dig(w().dns.port, [`www.${ZONE}`, 'A', '+short'])).stdout.trim()).toBe('10.0.7.1');
  });
});
