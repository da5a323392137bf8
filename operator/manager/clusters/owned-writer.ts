// The one writer of everything the operator owns in workload clusters (record
// sets, mirror Services and EndpointSlices, and whatever output comes next).
// Each output computes what it wants and whether an object is its own; this
// module does what is the same for all of them:
// - compare against the watched cache before writing, so that a restart that
//   computes the same objects writes nothing, and tell a cache that lags
//   behind our own last write from a real difference;
// - server-side apply with the operator's one field manager, forced (the
//   caller checked the object is ours), queued at the cluster's write gate;
// - delete only the very object seen (UID precondition), a 404 or a 409 on
//   the UID meaning "not there, or not ours any more": nothing to do;
// - note each write before it is sent (its watch event often arrives before
//   its response), so that the event it causes is known as our own echo and
//   needs no reconcile.
// It remembers contents by their SHA-256 only: it holds an entry per object
// and cluster (a record set goes to every cluster of its team), and a digest
// is 44 characters where a large Service's record sets are kilobytes.
import { createHash } from 'node:crypto';
import { PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import type { ChangeType } from '../runtime/informer.js';
import { httpStatus } from '../runtime/log.js';
import type { RemoteCluster } from './remote.js';

/** What an output compares of an object of its kind: a canonical string, the same for a live object and a manifest. */
export type ContentOf<T> = (object: T) => string;

export interface OwnedWriterOptions {
  fieldManager: string;
  requestTimeoutMs: number;
}

/** A desired object with its content computed once (it is compared in every cluster). */
export interface DesiredObject<T> {
  object: KubernetesObject;
  content: string;
  contentOf: ContentOf<T>;
  /**
   * The existing object differs from the desired one in a field the API server will not change in
   * place (a Service's clusterIP None ↔ an IP, ExternalName): it is deleted, under its UID, and
   * created anew.
   */
  mustRecreate?: (existing: T) => boolean;
}

/** The object to delete, as seen in the cache: with its UID, only that very object goes. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid?: string;
}

type Intent = { digest: string; contentOf: ContentOf<KubernetesObject> } | 'deleted';

export class OwnedObjectWriter {
  /** Our last write per object: the content's digest, and the resourceVersion of the object it replaced. */
  private readonly lastWrite = new Map<string, { digest: string; replacedVersion: string }>();
  /** Digest of cached objects' content, valid while their resourceVersion is (the record sets of a large Service are big). */
  private readonly seenDigest = new Map<string, { version: string; digest: string }>();
  /** Per object, what our latest request left: its content's digest, or that it deleted it. */
  private readonly intended = new Map<string, Intent>();
  /** A desired object is compared in every cluster of its team: its digest is computed once. */
  private readonly desiredDigest = new WeakMap<object, string>();

  constructor(private readonly opts: OwnedWriterOptions) {}

  /**
   * Whether `desired` must be written over `existing` (the cached object, if any). Nothing in the
   * cache is always a write: a cache lagging behind our own create cannot be told from an object
   * someone deleted, and server-side apply of unchanged content changes nothing.
   */
  differs<T extends KubernetesObject>(
    cluster: string,
    existing: T | undefined,
    desired: DesiredObject<T>,
  ): boolean {
    if (!existing) return true;
    const key = keyOf(cluster, desired.object.kind, desired.object);
    const digest = this.digestOfDesired(desired);
    if (this.digestOf(key, existing, desired.contentOf) === digest) return false;
    const last = this.lastWrite.get(key);
    return !(
      last &&
      last.digest === digest &&
      last.replacedVersion === (existing.metadata?.resourceVersion ?? '')
    );
  }

  /** Server-side applies `desired` (which replaces `existing`, if the cache shows one), noting it as ours first. */
  async apply<T extends KubernetesObject>(
    remote: RemoteCluster,
    existing: T | undefined,
    desired: DesiredObject<T>,
  ): Promise<KubernetesObject> {
    const { object } = desired;
    const key = keyOf(remote.key, object.kind, object);
    const digest = this.digestOfDesired(desired);
    this.intended.set(key, {
      digest,
      contentOf: desired.contentOf as ContentOf<KubernetesObject>,
    });
    let applied: KubernetesObject;
    try {
      applied = await remote.write(
        `apply ${object.kind} ${object.metadata?.namespace}/${object.metadata?.name}`,
        this.opts.requestTimeoutMs,
        () =>
          remote.objects.patch(
            object,
            undefined,
            undefined,
            this.opts.fieldManager,
            true,
            PatchStrategy.ServerSideApply,
          ),
      );
    } catch (err) {
      this.intended.delete(key);
      throw err;
    }
    this.lastWrite.set(key, {
      digest,
      replacedVersion: existing?.metadata?.resourceVersion ?? '',
    });
    return applied;
  }

  /** Writes `desired` if it differs from `existing`; whether it did. */
  async ensure<T extends KubernetesObject>(
    remote: RemoteCluster,
    existing: T | undefined,
    desired: DesiredObject<T>,
  ): Promise<{ changed: boolean; applied?: KubernetesObject; recreated?: boolean }> {
    if (existing && desired.mustRecreate?.(existing)) {
      // Of the desired object's kind: objects listed from a cache carry no apiVersion and kind.
      const { apiVersion = '', kind = '' } = desired.object;
      const { metadata = {} } = existing as KubernetesObject;
      await this.delete(remote, {
        apiVersion,
        kind,
        namespace: metadata.namespace ?? '',
        name: metadata.name ?? '',
        uid: metadata.uid,
      });
      return { changed: true, recreated: true, applied: await this.apply(remote, undefined, desired) };
    }
    if (!this.differs(remote.key, existing, desired)) return { changed: false };
    return { changed: true, applied: await this.apply(remote, existing, desired) };
  }

  /** Deletes the object; false when it was gone already or is another object now (409 on the UID). */
  async delete(remote: RemoteCluster, ref: ObjectRef): Promise<boolean> {
    const { apiVersion, kind, namespace, name, uid } = ref;
    const key = keyOf(remote.key, kind, { metadata: { namespace, name } });
    this.lastWrite.delete(key);
    this.seenDigest.delete(key);
    this.intended.set(key, 'deleted');
    try {
      await remote.write(`delete ${kind} ${namespace}/${name}`, this.opts.requestTimeoutMs, () =>
        remote.objects.delete(
          { apiVersion, kind, metadata: { name, namespace } },
          undefined,
          undefined,
          undefined,
          undefined,
          undefined,
          uid ? { preconditions: { uid } } : undefined,
        ),
      );
      return true;
    } catch (err) {
      const status = httpStatus(err);
      if (status === 404 || (uid && status === 409)) return false;
      this.intended.delete(key);
      throw err;
    }
  }

  /**
   * Whether a watch event shows exactly what our latest write or delete of that object left: then
   * nothing needs reconciling (the reconcile that wrote it wanted just that, and a change of the
   * world it read comes with its own event). Anything else, someone's edit or delete, is drift.
   */
  isOwnEcho(cluster: string, kind: string, type: ChangeType, object: KubernetesObject): boolean {
    const key = keyOf(cluster, kind, object);
    const intended = this.intended.get(key);
    if (intended === undefined) return false;
    if (type === 'delete') {
      if (intended !== 'deleted') return false;
      this.intended.delete(key);
      return true;
    }
    if (intended === 'deleted') return false;
    return this.digestOf(key, object, intended.contentOf) === intended.digest;
  }

  private digestOf<T extends KubernetesObject>(key: string, object: T, contentOf: ContentOf<T>): string {
    const version = object.metadata?.resourceVersion ?? '';
    let seen = this.seenDigest.get(key);
    if (!seen || seen.version !== version || !version) {
      seen = { version, digest: sha256(contentOf(object)) };
      this.seenDigest.set(key, seen);
    }
    return seen.digest;
  }

  private digestOfDesired<T>(desired: DesiredObject<T>): string {
    let digest = this.desiredDigest.get(desired);
    if (digest === undefined) {
      digest = sha256(desired.content);
      this.desiredDigest.set(desired, digest);
    }
    return digest;
  }
}

function sha256(content: string): string {
  return createHash('sha256').update(content).digest('base64');
}

/** Objects of a list or watch carry no kind: the kind is always the caller's word. */
function keyOf(cluster: string, kind: string | undefined, object: KubernetesObject): string {
  return `${cluster}|${kind ?? ''}|${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
}
