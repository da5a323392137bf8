import { ApiException, type KubernetesObject } from '@kubernetes/client-node';
import { OwnedObjectWriter, type DesiredObject } from './owned-writer.js';
import type { RemoteCluster } from './remote.js';

type Call = { op: 'patch' | 'delete'; object: KubernetesObject; options?: unknown; manager?: string };

/**
 * The part of a RemoteCluster the writer uses: its key, its write gate (here: run at once) and its
 * generic object client, recording the requests and answering with `answer`.
 */
function remoteDouble(answer: (call: Call) => Promise<KubernetesObject> = async (c) => c.object) {
  const calls: Call[] = [];
  const remote = {
    key: 'fleet/c1',
    write: <T>(_what: string, _timeoutMs: number, request: () => Promise<T>) => request(),
    objects: {
      patch: (object: KubernetesObject, _p: unknown, _d: unknown, manager: string) => {
        const call: Call = { op: 'patch', object, manager };
        calls.push(call);
        return answer(call);
      },
      delete: (object: KubernetesObject, ...rest: unknown[]) => {
        const call: Call = { op: 'delete', object, options: rest[5] };
        calls.push(call);
        return answer(call);
      },
    },
  };
  // The double has only what the writer touches; the cast says so instead of building a client.
  return { remote: remote as unknown as RemoteCluster, calls };
}

const contentOf = (o: KubernetesObject) => JSON.stringify(o.metadata?.labels ?? {});

function desired(labels: Record<string, string>): DesiredObject<KubernetesObject> {
  const object = { apiVersion: 'v1', kind: 'Service', metadata: { namespace: 'apps', name: 'db', labels } };
  return { object, content: contentOf(object), contentOf };
}

function live(labels: Record<string, string>, resourceVersion: string, uid = 'u1'): KubernetesObject {
  return { metadata: { namespace: 'apps', name: 'db', labels, resourceVersion, uid } };
}

const writer = () => new OwnedObjectWriter({ fieldManager: 'capi-dns-controller', requestTimeoutMs: 1_000 });

describe('OwnedObjectWriter', () => {
  it('writes what is missing or differs, with our field manager, and nothing that is already so', async () => {
    const w = writer();
    const { remote, calls } = remoteDouble();
    expect((await w.ensure(remote, undefined, desired({ a: '1' }))).changed).toBe(true);
    expect((await w.ensure(remote, live({ a: '1' }, '5'), desired({ a: '1' }))).changed).toBe(false);
    expect((await w.ensure(remote, live({ a: '0' }, '6'), desired({ a: '1' }))).changed).toBe(true);
    expect(calls.map((c) => [c.op, c.manager])).toEqual([
      ['patch', 'capi-dns-controller'],
      ['patch', 'capi-dns-controller'],
    ]);
  });

  it('recreates an object that differs in a field the API server does not change in place: delete under its UID, then create', async () => {
    const w = writer();
    const { remote, calls } = remoteDouble();
    const immutable = (o: KubernetesObject) => o.metadata?.labels?.kind !== 'headless';
    const want = { ...desired({ kind: 'headless' }), mustRecreate: immutable };
    const got = await w.ensure(remote, live({ kind: 'clusterIP' }, '5', 'u7'), want);
    expect(got).toMatchObject({ changed: true, recreated: true });
    expect(calls.map((c) => [c.op, c.object.kind, c.object.metadata?.name])).toEqual([
      ['delete', 'Service', 'db'],
      ['patch', 'Service', 'db'],
    ]);
    expect(calls[0]?.options).toMatchObject({ preconditions: { uid: 'u7' } });
    // Already of the right kind: compared as usual.
    expect((await w.ensure(remote, live({ kind: 'headless' }, '6'), want)).changed).toBe(false);
  });

  it('does not write again while the cache still shows the object its last write replaced', async () => {
    const w = writer();
    const { remote, calls } = remoteDouble();
    const old = live({ a: '0' }, '6');
    await w.ensure(remote, old, desired({ a: '1' }));
    expect(w.differs('fleet/c1', old, desired({ a: '1' }))).toBe(false);
    // Someone else changed it since: a new resourceVersion is a real difference.
    expect(w.differs('fleet/c1', live({ a: '0' }, '9'), desired({ a: '1' }))).toBe(true);
    expect(calls).toHaveLength(1);
  });

  it('knows the watch event of its own write as an echo, even when it comes before the response', async () => {
    const w = writer();
    let echoDuringRequest: boolean | undefined;
    const { remote } = remoteDouble(async (c) => {
      echoDuringRequest = w.isOwnEcho('fleet/c1', 'Service', 'update', live({ a: '1' }, '7'));
      return c.object;
    });
    await w.apply(remote, undefined, desired({ a: '1' }));
    expect(echoDuringRequest).toBe(true);
    expect(w.isOwnEcho('fleet/c1', 'Service', 'update', live({ a: '2' }, '8'))).toBe(false);
    expect(w.isOwnEcho('fleet/c1', 'Service', 'delete', live({ a: '1' }, '8'))).toBe(false);
    expect(w.isOwnEcho('fleet/c2', 'Service', 'update', live({ a: '1' }, '7'))).toBe(false);
    expect(w.isOwnEcho('fleet/c1', 'EndpointSlice', 'update', live({ a: '1' }, '7'))).toBe(false);
  });

  it('forgets a write that failed: its echo would be someone else’s change', async () => {
    const w = writer();
    const { remote } = remoteDouble(async () => {
      throw new ApiException(422, 'invalid', {}, {});
    });
    await expect(w.apply(remote, undefined, desired({ a: '1' }))).rejects.toThrow(/invalid/);
    expect(w.isOwnEcho('fleet/c1', 'Service', 'update', live({ a: '1' }, '7'))).toBe(false);
  });

  it('deletes only the very object seen, and takes gone or replaced for nothing to do', async () => {
    const w = writer();
    const ref = { apiVersion: 'v1', kind: 'Service', namespace: 'apps', name: 'db', uid: 'u1' };
    const ok = remoteDouble();
    expect(await w.delete(ok.remote, ref)).toBe(true);
    expect(ok.calls[0]!.options).toEqual({ preconditions: { uid: 'u1' } });
    expect(w.isOwnEcho('fleet/c1', 'Service', 'delete', live({}, '9'))).toBe(true);
    // Consumed: a second delete event of that name is not ours.
    expect(w.isOwnEcho('fleet/c1', 'Service', 'delete', live({}, '9'))).toBe(false);
    for (const code of [404, 409]) {
      const { remote } = remoteDouble(async () => {
        throw new ApiException(code, 'no', {}, {});
      });
      expect(await w.delete(remote, ref)).toBe(false);
    }
    const failing = remoteDouble(async () => {
      throw new ApiException(500, 'etcd timeout', {}, {});
    });
    await expect(w.delete(failing.remote, ref)).rejects.toThrow(/etcd timeout/);
    expect(w.isOwnEcho('fleet/c1', 'Service', 'delete', live({}, '9'))).toBe(false);
  });
});
