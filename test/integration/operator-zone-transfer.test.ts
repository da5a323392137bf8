// Zone transfer declared on the DNSZone (issue 43, ADR 0216) on real API
// servers: a DNSZone with spec.transfer whose TSIG Secret is missing gets
// TransferReady=False (SecretNotFound) and the zone stays served as it was;
// once the Secret exists, the operator copies the key into the workload
// cluster's Secret capi-dns-tsig-keys, the dns-server there (started with no
// transfer flag) reads it at run time, and an NSD secondary on a loopback
// address of its own takes the zone by AXFR with TSIG.
import { CoreV1Api } from '@kubernetes/client-node';
import { DEFAULT_RECORDS_NAMESPACE, TSIG_KEYS_SECRET } from '../../api/index.js';
import { dig } from '../support/dns.js';
import { startDnsZoneWorld, type DnsZoneWorld } from '../support/dnszone-world.js';
import { eventually, statusCode } from '../support/kube.js';
import { freePortOn, newKey, startNsdSecondary, type Secondary } from '../support/secondaries.js';

const ZONE = 'xfr.corp.internal';
const PRIMARY = '127.43.2.1';
const SECONDARY = '127.43.2.2';
const RECORDS_NS = DEFAULT_RECORDS_NAMESPACE;
const KEYS_NS = 'dns-admin';

describe('DNSZone spec.transfer: a secondary of its own takes the zone', () => {
  let world: DnsZoneWorld | undefined;
  let nsd: Secondary | undefined;
  const key = newKey('xfr-corp-key.');

  const w = () => world!;
  const transferReady = (reason: string, timeoutMs?: number) =>
    w().conditionReason('xfr', 'TransferReady', reason, timeoutMs);
  const workloadKeys = async () => {
    try {
      return await w()
        .workload()
        .makeApiClient(CoreV1Api)
        .readNamespacedSecret({ name: TSIG_KEYS_SECRET, namespace: RECORDS_NS });
    } catch (err) {
      if (statusCode(err) === 404) return undefined;
      throw err;
    }
  };
  const servedSerial = async () =>
    Number((await dig(w().dns.port, ['+short', ZONE, 'SOA'], PRIMARY)).stdout.trim().split(/\s+/)[2]);

  beforeAll(async () => {
    world = await startDnsZoneWorld({
      keysNamespace: KEYS_NS,
      records: [{ name: `www.${ZONE}`, type: 'A', values: ['10.0.43.1'] }],
      // No --tsig-key-file, no --transfer-secondary: the transfer comes from the DNSZone.
      dnsServerArgs: ['--listen', `${PRIMARY}:${await freePortOn(PRIMARY)}`, '--soa-retry', '2'],
    });
  }, 180_000);

  afterAll(async () => {
    await nsd?.stop();
    await world?.stop();
  }, 60_000);

  it('a missing TSIG Secret: TransferReady=False SecretNotFound, the zone served, no key copied', async () => {
    const nsdPort = await freePortOn(SECONDARY);
    await w().applyZone('xfr', {
      zone: ZONE,
      transfer: {
        secondaries: [{ address: SECONDARY, port: nsdPort }],
        tsigSecretRef: { namespace: KEYS_NS, name: 'xfr-tsig' },
      },
    });
    const { zone, condition } = await transferReady('SecretNotFound');
    expect(condition.status).toBe('False');
    expect(condition.message).toContain(`no Secret ${KEYS_NS}/xfr-tsig`);
    expect(zone.status?.enforced?.transfer).toBeUndefined();
    await eventually(async () => {
      const a = (await dig(w().dns.port, ['+short', `www.${ZONE}`, 'A'], PRIMARY)).stdout.trim();
      if (a !== '10.0.43.1') throw new Error(`www.${ZONE}: ${a}`);
    }, 20_000);
    expect(await workloadKeys()).toBeUndefined();
    // Running already: it gets the NOTIFY once the transfer is in force.
    nsd = await startNsdSecondary({
      zone: ZONE,
      primary: { address: PRIMARY, port: w().dns.port },
      key,
      address: SECONDARY,
      port: nsdPort,
    });
  }, 60_000);

  it('the Secret created: TransferReady=True, the key copied, NSD takes the zone by AXFR with TSIG', async () => {
    await w().applyKeySecret('xfr-tsig', { name: key.name, algorithm: 'hmac-sha256', secret: key.secret });
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
    await w().applyKeySecret('xfr-tsig', { name: key.name, algorithm: 'hmac-md5', secret: key.secret });
    // The TSIG Secret is watched (operator/zones/secret-watches.ts): seen at once.
    const { zone } = await transferReady('SecretInvalid', 30_000);
    expect(zone.status?.enforced?.transfer).toBeDefined();
    const copied = await workloadKeys();
    expect(Buffer.from(copied?.data?.[ZONE] ?? '', 'base64').toString()).toContain(`secret "${key.secret}"`);
  }, 60_000);
});
