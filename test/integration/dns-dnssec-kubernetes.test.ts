// DNSSEC in Kubernetes mode, on an API server of its own: a zone declared
// signed (api/zone-declaration.ts `dnssec`) is signed with the key of the one
// Secret the declaration names; a malformed key or a Secret gone leaves the
// zone served as it was (signed with the last key read); a new key re-signs.
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import path from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import {
  DEFAULT_RECORDS_NAMESPACE,
  DNSSEC_KEYS_SECRET,
  GROUP,
  VERSION,
  ZONES_CONFIGMAP,
  ZONES_CONFIGMAP_KEY,
  zoneDeclarationText,
} from '../../api/index.js';
import { ensureNamespace } from '../support/capi.js';
import { dig, startDnsServer, type DnsProcess } from '../support/dns.js';
import { delv, delvAnchor } from '../support/dnssec.js';
import { apply, eventually, installCrds, readManifests } from '../support/kube.js';
import { repoRoot } from '../support/paths.js';
import { TestEnv } from '../support/testenv.js';

const CLUSTER = 'cluster-s';
const ZONE = 'signed.test';
const NS = DEFAULT_RECORDS_NAMESPACE;

function p256Key(): { pem: string; publicKey: string } {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  const xy = Buffer.concat([Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
  return {
    pem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicKey: xy.toString('base64'),
  };
}

describe('dns-server in Kubernetes mode signs a zone declared signed', () => {
  let env: TestEnv;
  let kc: KubeConfig;
  let core: CoreV1Api;
  let server: DnsProcess;
  const first = p256Key();

  const putKey = (pem: string) =>
    apply(kc, [
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: DNSSEC_KEYS_SECRET, namespace: NS },
        stringData: { [`${ZONE}.pem`]: pem },
      } as never,
    ]);
  const servedKey = async () =>
    ((await dig(server.port, [ZONE, 'DNSKEY', '+tcp'])).answer[0] ?? '').split(' ').slice(7).join('');

  beforeAll(async () => {
    env = await TestEnv.start({ workloadClusters: [CLUSTER] });
    kc = env.kubeConfig(CLUSTER);
    core = kc.makeApiClient(CoreV1Api);
    await installCrds(kc, readManifests(path.join(repoRoot(), 'crds')));
    await ensureNamespace(kc, NS);
    await putKey(first.pem);
    await apply(kc, [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: ZONES_CONFIGMAP, namespace: NS },
        data: {
          [ZONES_CONFIGMAP_KEY]: zoneDeclarationText([
            { name: ZONE, dnssec: { secret: DNSSEC_KEYS_SECRET, key: `${ZONE}.pem` } },
          ]),
        },
      } as never,
      {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'DNSRecordSet',
        metadata: { name: 'www', namespace: NS },
        spec: { records: [{ name: `www.${ZONE}`, type: 'A', values: ['10.0.5.1'] }] },
      } as never,
    ]);
    server = await startDnsServer(
      ['--zone', 'xcc.test', '--kubeconfig', env.cluster(CLUSTER).kubeconfig, '--resync', '2s'],
      { health: true },
    );
  }, 240_000);
  afterAll(async () => {
    await server?.stop();
    await env?.stop();
  });

  it('serves the key of the Secret and signs with it: delv validates', async () => {
    await eventually(async () => {
      if ((await servedKey()) !== first.publicKey) throw new Error('not signed with the key yet');
    }, 20_000);
    const anchor = delvAnchor(ZONE, `257 3 13 ${first.publicKey}`, server.dir);
    const r = await delv(server.port, anchor, ZONE, `www.${ZONE}`, 'A');
    expect(r.validated).toBe(true);
  });

  it('keeps the zone served as it was when the key is malformed or its Secret is gone, and re-signs with a new key', async () => {
    await putKey('-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n');
    await eventually(async () => {
      if (!server.logs().includes(`signing key of ${ZONE}`)) throw new Error('malformed key not reported');
    }, 20_000);
    expect(await servedKey()).toBe(first.publicKey);
    expect((await dig(server.port, [`www.${ZONE}`, 'A', '+short'])).stdout.trim()).toBe('10.0.5.1');

    const second = p256Key();
    await putKey(second.pem);
    await eventually(async () => {
      if ((await servedKey()) !== second.publicKey) throw new Error('not re-signed with the new key');
    }, 20_000);

    await core.deleteNamespacedSecret({ name: DNSSEC_KEYS_SECRET, namespace: NS });
    await eventually(async () => {
      if (!server.logs().includes('DNSSEC key not read')) throw new Error('missing Secret not reported');
    }, 20_000);
    expect(await servedKey()).toBe(second.publicKey);
    const anchor = delvAnchor(ZONE, `257 3 13 ${second.publicKey}`, server.dir);
    expect((await delv(server.port, anchor, ZONE, `www.${ZONE}`, 'A')).validated).toBe(true);
  });
});
