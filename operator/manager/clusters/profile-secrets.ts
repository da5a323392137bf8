// The Secrets ClusterProfiles name for their credentials (profile-access.ts),
// read by name (GET), never listed: no other Secret's data reaches the
// operator. Each wanted Secret is read when first wanted and again every
// refreshMs (a rotation is noticed within that); a change of its data, or a
// failed read that follows a good one, is reported.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import { errorText, httpStatus, type Logger } from '../runtime/log.js';
import type { SecretRef } from './profile-access.js';

interface Read {
  data?: Record<string, string>;
  error?: string;
  fingerprint: string;
}

export class ProfileSecrets {
  private readonly core: CoreV1Api;
  private readonly reads = new Map<string, Read>();
  private readonly inFlight = new Set<string>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly opts: {
      kc: KubeConfig;
      refreshMs: number;
      log: Logger;
      onChange: (ref: SecretRef) => void;
    },
  ) {
    this.core = opts.kc.makeApiClient(CoreV1Api);
    this.timer = setInterval(() => {
      for (const key of this.reads.keys()) this.read(refOf(key));
    }, opts.refreshMs);
    this.timer.unref();
  }

  /** The Secret as last read, or why not; undefined until the first read is done (which this starts). */
  get(ref: SecretRef): { data?: Record<string, string>; error?: string } | undefined {
    const got = this.reads.get(keyOf(ref));
    if (!got) this.read(ref);
    return got;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private read(ref: SecretRef): void {
    const key = keyOf(ref);
    if (this.inFlight.has(key)) return;
    this.inFlight.add(key);
    this.core
      .readNamespacedSecret({ namespace: ref.namespace, name: ref.name })
      .then(
        (s): Read => ({
          data: s.data ?? {},
          fingerprint: createHash('sha256')
            .update(JSON.stringify(s.data ?? {}))
            .digest('hex'),
        }),
        (err: unknown): Read => {
          const error =
            httpStatus(err) === 404 ? `Secret ${key} not found` : `Secret ${key} not read: ${errorText(err)}`;
          return { error, fingerprint: error };
        },
      )
      .then((next) => {
        this.inFlight.delete(key);
        const before = this.reads.get(key);
        this.reads.set(key, next);
        if (before?.fingerprint === next.fingerprint) return;
        if (next.error)
          this.opts.log.warn('ClusterProfile credentials not read', { secret: key, error: next.error });
        this.opts.onChange(ref);
      });
  }
}

function keyOf(ref: SecretRef): string {
  return `${ref.namespace}/${ref.name}`;
}

function refOf(key: string): SecretRef {
  const [namespace = '', name = ''] = key.split('/');
  return { namespace, name };
}
