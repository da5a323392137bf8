// The GatewayDNS object's own writes in the management cluster, as Cluster
// API's patch helper makes them: the status (a merge patch of the whole
// status, only when it differs) and the finalizers (guarded by the
// resourceVersion). Both are fenced (ADR 0207): written only while this
// replica serves the namespace.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import {
  GATEWAYDNS_PLURAL,
  GROUP,
  VERSION,
  type GatewayDNS,
  type GatewayDNSStatus,
} from '../../../api/index.js';
import { READY } from '../../model/conditions.js';
import { sameJson, withTimeout } from '../../manager/runtime/equal.js';
import { objectKey } from '../../manager/runtime/workqueue.js';

export interface PatcherOptions {
  management: KubeConfig;
  requestTimeoutMs: number;
  /** Whether this replica serves the management namespace now; checked right before each write. */
  serves: (namespace: string) => boolean;
}

export class GatewayDnsPatcher {
  private readonly custom: CustomObjectsApi;
  /**
   * The UID per GatewayDNS key whose status this process has written: the informer's copy may not
   * show that write yet, and a second reconcile must not take such an object for a fresh one and
   * set it back to Pending.
   */
  private readonly statusWritten = new Map<string, string | undefined>();

  constructor(private readonly opts: PatcherOptions) {
    this.custom = opts.management.makeApiClient(CustomObjectsApi);
  }

  /** Whether this object is new to the operator: no Ready condition, and no status written by us yet. */
  isFresh(gw: GatewayDNS): boolean {
    if (gw.status?.conditions?.some((c) => c.type === READY)) return false;
    const key = objectKey(gw);
    return !this.statusWritten.has(key) || this.statusWritten.get(key) !== gw.metadata.uid;
  }

  forget(key: string): void {
    this.statusWritten.delete(key);
  }

  async patchStatus(gw: GatewayDNS, status: GatewayDNSStatus): Promise<void> {
    const key = objectKey(gw);
    if (sameJson(gw.status ?? {}, status)) {
      this.statusWritten.set(key, gw.metadata.uid);
      return;
    }
    this.fence(gw, 'status');
    await withTimeout(
      this.custom.patchNamespacedCustomObjectStatus(
        // Merge patch replaces lists whole: conditions and clusters are always complete here.
        { ...objectOf(gw), body: { status } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
      this.opts.requestTimeoutMs,
      `status of gatewaydns ${key}`,
    );
    this.statusWritten.set(key, gw.metadata.uid);
  }

  async patchFinalizers(gw: GatewayDNS, finalizers: string[]): Promise<void> {
    this.fence(gw, 'finalizers');
    await withTimeout(
      this.custom.patchNamespacedCustomObject(
        // The resourceVersion makes this fail (and retry) if someone else changed finalizers meanwhile.
        { ...objectOf(gw), body: { metadata: { finalizers, resourceVersion: gw.metadata.resourceVersion } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
      this.opts.requestTimeoutMs,
      `finalizers of gatewaydns ${objectKey(gw)}`,
    );
  }

  /** The fence of ADR 0207 for the management cluster. */
  private fence(gw: GatewayDNS, what: string): void {
    const namespace = gw.metadata.namespace ?? '';
    if (!this.opts.serves(namespace))
      throw new Error(
        `${what} of gatewaydns ${namespace}/${gw.metadata.name} not written: namespace ${namespace} is not this replica's share now`,
      );
  }
}

/** The GatewayDNS as the custom-objects API names it. */
function objectOf(gw: GatewayDNS) {
  return {
    group: GROUP,
    version: VERSION,
    namespace: gw.metadata.namespace ?? '',
    plural: GATEWAYDNS_PLURAL,
    name: gw.metadata.name,
  };
}
