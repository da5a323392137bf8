// operator/zones/secret-watches.ts on the shared test environment's management
// API server, as an identity (impersonated) granted only what the docs say:
// with get alone the watch of a key Secret is refused, logged once, and
// watched() says so (the reconciler then reads it on a timer); granted list and
// watch on that one name (a Role with resourceNames), the watch runs and an
// edit of that Secret reports it, an edit of its neighbour does not, and a
// Secret no longer named is no longer watched.
import { CoreV1Api, KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { createLogger } from '../../runtime/log.js';
import { secretsNamedByAll, type SecretRef } from '../../operator/zones/key-secrets.js';
import { SecretWatches } from '../../operator/zones/secret-watches.js';
import { ensureNamespace } from '../support/capi.js';
import { testEnvInfo } from '../support/environment.js';
import { apply, eventually, roleBindingForUser } from '../support/kube.js';
import { kubeConfigOf } from '../support/testenv.js';

const NS = 'zone-secret-watches';
const USER = 'zone-secret-watcher';
const info = testEnvInfo();
const admin = kubeConfigOf(info, 'management');

/** The admin kubeconfig, acting as USER. */
function asUser(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: admin.clusters,
    contexts: admin.contexts,
    currentContext: admin.currentContext,
    users: admin.users.map((u) => ({ ...u, impersonateUser: USER })),
  });
  return kc;
}

function role(verbs: string[]): KubernetesObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: USER, namespace: NS },
    rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['key'], verbs }],
  } as KubernetesObject;
}

const secret = (name: string, value: string): KubernetesObject =>
  ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: NS },
    stringData: { v: value },
  }) as KubernetesObject;

describe('SecretWatches: one metadata-only watch per named Secret, under the narrowest grant', () => {
  const logs: string[] = [];
  const changes: SecretRef[] = [];
  let watches: SecretWatches | undefined;
  const KEY = { namespace: NS, name: 'key' };
  const named = (refs: SecretRef[]) => new Map(refs.map((r) => [`${r.namespace}/${r.name}`, r]));

  beforeAll(async () => {
    await ensureNamespace(admin, NS);
    await apply(admin, [secret('key', 'one'), secret('neighbour', 'one'), role(['get'])]);
    await apply(admin, [roleBindingForUser(USER, NS)]);
    watches = new SecretWatches({
      kc: asUser(),
      log: createLogger('info', {}, (line) => logs.push(line)),
      onChange: (ref) => changes.push(ref),
    });
  });

  afterAll(async () => {
    await watches?.stop();
    await admin.makeApiClient(CoreV1Api).deleteNamespace({ name: NS });
  });

  it('get alone: the watch is refused, logged once with its status, and not reported watched', async () => {
    watches!.watchOnly(named([KEY]));
    await eventually(
      async () => expect(logs.join('\n')).toContain('cannot watch a Secret a DNSZone names'),
      10_000,
    );
    // A few retries later, still one line.
    await new Promise((r) => setTimeout(r, 1_500));
    const refused = logs.filter((l) => l.includes('cannot watch a Secret a DNSZone names'));
    expect(refused).toHaveLength(1);
    expect(JSON.parse(refused[0]!)).toMatchObject({ secret: `${NS}/key`, status: 403 });
    expect(watches!.watched(KEY)).toBe(false);
    // What capi_dns_zone_secret_unwatched says for as long as it lasts.
    expect(watches!.unwatched()).toEqual([{ ref: KEY, status: 403 }]);
  });

  it('list and watch on that name: the watch runs, and only that Secret reports a change', async () => {
    await apply(admin, [role(['get', 'list', 'watch'])]);
    await eventually(async () => expect(watches!.watched(KEY)).toBe(true), 20_000, 100);
    expect(watches!.unwatched()).toEqual([]);
    expect(logs.join('\n')).toContain('watching a Secret a DNSZone names');
    // Its first list reported nothing: the zone that named it was queued by its own change.
    expect(changes).toEqual([]);
    await apply(admin, [secret('neighbour', 'two')]);
    await apply(admin, [secret('key', 'two')]);
    await eventually(async () => expect(changes).toEqual([KEY]), 5_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(changes).toEqual([KEY]);
  });

  it('no longer named: not watched, and its edits report nothing', async () => {
    watches!.watchOnly(secretsNamedByAll([], 'capi-dns-system'));
    expect(watches!.watched(KEY)).toBe(false);
    await apply(admin, [secret('key', 'three')]);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(changes).toEqual([KEY]);
  });
});
