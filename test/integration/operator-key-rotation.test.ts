// A key rotated by editing its Secret on the management cluster reaches the
// workload cluster at once, with nothing else happening: the operator watches
// the Secrets the DNSZones name (operator/zones/secret-watches.ts, metadata
// only, one per Secret) and re-queues the zones that name the one that
// changed. The DNSSEC key (generated, then replaced in place) has no timer
// behind it at all, so its copy, status.ds and the DNSKEY served changing
// show the watch; the TSIG key's copy changes well within the 15 s the
// reconciler used to wait between looks, several times in a row. Last, the
// narrowest grant the docs offer for a key Secret elsewhere (a Role with
// resourceNames) admits exactly the list that watch makes.
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { CoreV1Api, type KubernetesObject } from '@kubernetes/client-node';
import { DEFAULT_RECORDS_NAMESPACE, DNSSEC_KEYS_SECRET, TSIG_KEYS_SECRET } from '../../api/index.js';
import { dig } from '../support/dns.js';
import { startDnsZoneWorld, type DnsZoneWorld } from '../support/dnszone-world.js';
import { apply, eventually, roleBindingForUser } from '../support/kube.js';
import { binPath } from '../support/paths.js';
import { freePortOn, newKey } from '../support/secondaries.js';

const ZONE = 'rotate.corp.internal';
const RECORDS = DEFAULT_RECORDS_NAMESPACE;
/** The operator's key namespace (its default): the generated key's, and here the TSIG Secret's too. */
const KEYS = 'capi-dns-system';
/** Nothing listens there: the dns-server's NOTIFYs to it go unanswered, on loopback. */
const SECONDARY = '127.44.3.2';
/** A watch delivers in well under a second; a timer (15 s for the TSIG key) would not, in a row. */
const PROMPT_MS = 4_000;

const newPem = () =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();

describe('a key Secret edited on the management cluster re-queues the DNSZone that names it', () => {
  let world: DnsZoneWorld | undefined;
  const w = () => world!;
  const workloadSecret = async (name: string) =>
    (await w().workload().makeApiClient(CoreV1Api).readNamespacedSecret({ namespace: RECORDS, name })).data ??
    {};
  const decoded = (b64: string | undefined) => Buffer.from(b64 ?? '', 'base64').toString('utf8');
  const servedDnskey = async () =>
    (await dig(w().dns.port, [ZONE, 'DNSKEY', '+tcp', '+short'])).stdout.trim();
  /** The time from `edit` until `check` passes, which must be prompt. */
  const promptly = async (edit: () => Promise<void>, check: () => Promise<void>) => {
    const began = Date.now();
    await edit();
    await eventually(check, PROMPT_MS, 100);
    return Date.now() - began;
  };

  beforeAll(async () => {
    world = await startDnsZoneWorld({
      keysNamespace: KEYS,
      records: [{ name: `www.${ZONE}`, type: 'A', values: ['10.0.9.1'] }],
    });
  }, 180_000);

  afterAll(async () => {
    await world?.stop();
  }, 60_000);

  let ds = '';
  const tsig = newKey('rotate-key.');

  it('signed with a generated key and transferred with a TSIG key: both copied to the workload cluster', async () => {
    await w().applyKeySecret('rotate-tsig', {
      name: tsig.name,
      algorithm: 'hmac-sha256',
      secret: tsig.secret,
    });
    await w().applyZone('rotate', {
      zone: ZONE,
      dnssec: { enabled: true },
      transfer: {
        secondaries: [{ address: SECONDARY, port: await freePortOn(SECONDARY) }],
        tsigSecretRef: { namespace: KEYS, name: 'rotate-tsig' },
      },
    });
    const { zone } = await w().conditionReason('rotate', 'Signed', 'Signed');
    ds = zone.status!.ds![0]!;
    await w().conditionReason('rotate', 'TransferReady', 'Ready');
    await eventually(async () => {
      expect(decoded((await workloadSecret(TSIG_KEYS_SECRET))[ZONE])).toContain(tsig.secret);
      expect((await workloadSecret(DNSSEC_KEYS_SECRET))[`${ZONE}.pem`]).toBeTruthy();
      expect(await servedDnskey()).not.toBe('');
    }, 30_000);
    // Let the Secrets' watches list once: an edit from now on is a change they report.
    await new Promise((r) => setTimeout(r, 1_000));
  }, 60_000);

  it('the DNSSEC key replaced in its Secret: the copy, status.ds and the DNSKEY served change', async () => {
    const before = await servedDnskey();
    const pem = newPem();
    const ms = await promptly(
      () => w().applyKeySecret('rotate-dnssec', { 'key.pem': pem }),
      async () => {
        expect(decoded((await workloadSecret(DNSSEC_KEYS_SECRET))[`${ZONE}.pem`])).toBe(pem);
        const status = (await w().readZone('rotate')).status;
        expect(status?.ds).toHaveLength(1);
        expect(status?.ds?.[0]).not.toBe(ds);
      },
    );
    expect(ms).toBeLessThan(PROMPT_MS);
    // The dns-server (its own 2 s resync at most) signs with the new key.
    await eventually(async () => expect(await servedDnskey()).not.toBe(before), 20_000, 250);
  }, 60_000);

  it('the TSIG key replaced in its Secret, three times: each copy changes within seconds', async () => {
    for (let i = 0; i < 3; i++) {
      const next = newKey('rotate-key.');
      const ms = await promptly(
        () =>
          w().applyKeySecret('rotate-tsig', {
            name: next.name,
            algorithm: 'hmac-sha256',
            secret: next.secret,
          }),
        async () => expect(decoded((await workloadSecret(TSIG_KEYS_SECRET))[ZONE])).toContain(next.secret),
      );
      expect(ms).toBeLessThan(PROMPT_MS);
    }
  }, 60_000);

  it('a Role with resourceNames admits the list by name a Secret watch makes, and nothing wider', async () => {
    const user = 'zone-key-reader';
    await apply(w().management(), [
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: user, namespace: KEYS },
        rules: [
          {
            apiGroups: [''],
            resources: ['secrets'],
            resourceNames: ['rotate-tsig'],
            verbs: ['get', 'list', 'watch'],
          },
        ],
      } as KubernetesObject,
      roleBindingForUser(user, KEYS),
    ]);
    const list = (...args: string[]) =>
      spawnSync(
        binPath('kubectl'),
        [
          '--kubeconfig',
          w().env.cluster('management').kubeconfig,
          '--as',
          user,
          '-n',
          KEYS,
          'get',
          'secrets',
          '-o',
          'name',
          ...args,
        ],
        { encoding: 'utf8' },
      );
    await eventually(async () => {
      const named = list('--field-selector', 'metadata.name=rotate-tsig');
      expect(named.stderr).toBe('');
      expect(named.stdout.trim()).toBe('secret/rotate-tsig');
    });
    expect(list().stderr).toContain('forbidden');
    expect(list('--field-selector', 'metadata.name=rotate-dnssec').stderr).toContain('forbidden');
  });
});
