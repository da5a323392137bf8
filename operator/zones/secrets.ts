// The management cluster's Secrets the DNSZone controller reads: a signed
// zone's key (keys.ts) and a transfer's TSIG key (spec.transfer.tsigSecretRef,
// the reconciler). Read by name when a zone asks for one, each pass: no
// Secret's data is watched (config/rbac/operator). A Secret that does not
// exist is no error, and each request has the controller's timeout.
import { CoreV1Api, type KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { withTimeout } from '../manager/runtime/equal.js';
import { httpStatus } from '../manager/runtime/log.js';

export class ManagementSecrets {
  private readonly core: CoreV1Api;

  constructor(
    management: KubeConfig,
    private readonly requestTimeoutMs: number,
  ) {
    this.core = management.makeApiClient(CoreV1Api);
  }

  /** The Secret; undefined when it does not exist. */
  async get(namespace: string, name: string): Promise<V1Secret | undefined> {
    try {
      return await withTimeout(
        this.core.readNamespacedSecret({ namespace, name }),
        this.requestTimeoutMs,
        `secret ${namespace}/${name}`,
      );
    } catch (err) {
      if (httpStatus(err) === 404) return undefined;
      throw err;
    }
  }

  /** The Secret's data as the API returns it (base64 values); undefined when it does not exist. */
  async data(namespace: string, name: string): Promise<Record<string, string> | undefined> {
    const secret = await this.get(namespace, name);
    return secret && (secret.data ?? {});
  }

  /** Created; throws when it cannot be (a 409 when it exists). */
  async create(namespace: string, body: V1Secret): Promise<V1Secret> {
    return withTimeout(
      this.core.createNamespacedSecret({ namespace, body }),
      this.requestTimeoutMs,
      `create secret ${namespace}/${body.metadata?.name}`,
    );
  }
}
