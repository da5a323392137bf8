// Keeps the managed forward block in one workload cluster's
// kube-system/coredns Corefile: present while the cluster runs a dns-server
// (its Service exists in the records namespace) and is not opted out by the
// Cluster annotation, absent otherwise or when the operator is told to clean
// up. Every workload cluster with a dns-server is wired, selected by a
// GatewayDNS or not: a cluster that only consumes names needs them too. Reads only watched
// caches, writes only when the transform says the text changed, and carries
// the resourceVersion it read so it never overwrites an edit it has not seen.
import { objectKeyId, type ObjectKey } from '../manager/runtime/workqueue.js';
import {
  clusterEventTarget,
  frozenBy,
  notConnectableYet,
  type ClusterObject,
} from '../manager/clusters/lifecycle.js';
import type { V1ConfigMap, V1Service } from '@kubernetes/client-node';
import {
  COREDNS_ANNOTATION,
  COREDNS_UNMANAGED,
  DNS_SERVER_SERVICE,
  FORWARD_ADDRESS_ANNOTATION,
} from '../../api/index.js';
import type { ClusterCache } from '../manager/clusters/cache.js';
import { SERVICES } from '../manager/clusters/kinds.js';
import { COREDNS_CONFIGMAP, COREDNS_CONFIGMAPS, COREDNS_NAMESPACE } from './kinds.js';
import type { EventRecorder, EventTarget } from '../manager/runtime/events.js';
import { errorText, type Logger } from '../manager/runtime/log.js';
import { TerminalError } from '../manager/runtime/workqueue.js';
import { CorefileError } from './errors.js';
import { planCorefile, type CorefilePlan } from './plan.js';
import type { RemoteCluster } from '../manager/clusters/remote.js';

export const COREFILE_KEY = 'Corefile';

/** What the Corefile reconciler reads of a Cluster. */
export type CorefileCluster = ClusterObject;

export interface CorefileReconcilerOptions {
  clusters: ClusterCache;
  /** The Cluster object, from the management informer; undefined once it is gone. */
  getCluster: (namespace: string, name: string) => CorefileCluster | undefined;
  /** The zones forwarded to the dns-server, each in a managed block of its own: the suffix first. */
  zones: readonly string[];
  /**
   * The Multi-Cluster Services zone, forwarded like `zones` in the clusters of a management
   * namespace that is a ClusterSet (undefined: none there, and a block of ours is removed).
   */
  clustersetZone?: (namespace: string) => string | undefined;
  /** Every clusterset zone this operator may have forwarded: what is removed where none is wanted. */
  clustersetZones?: readonly string[];
  recordsNamespace: string;
  /** Remove the managed block everywhere instead of keeping it. */
  cleanup: boolean;
  events: EventRecorder;
  log: Logger;
  firstSyncTimeoutMs?: number;
  requestTimeoutMs?: number;
}

export type CorefileResult =
  'current' | 'patched' | 'removed' | 'no-configmap' | 'gone' | 'frozen' | 'provisioning';

/** One reconcile of one workload cluster's Corefile: what it works on. */
interface Scope {
  key: string;
  namespace: string;
  cluster: CorefileCluster;
  remote: RemoteCluster;
}

/** What observe found: CoreDNS's ConfigMap, and where the dns-server is, if it runs. */
interface Observation {
  configMap: V1ConfigMap;
  corefile: string;
  target?: string;
}

export class CorefileReconciler {
  constructor(private readonly opts: CorefileReconcilerOptions) {}

  /**
   * Reconciles one workload cluster's Corefile: fetch, then observe → plan (corefile/plan.ts,
   * pure) → apply → report. Throws to be retried; TerminalError for what a retry cannot fix.
   */
  async reconcile(clusterKey: ObjectKey): Promise<CorefileResult> {
    const { namespace, name } = clusterKey;
    const key = objectKeyId(clusterKey);
    const cluster = this.opts.getCluster(namespace, name);
    // A deleted Cluster takes its workload cluster with it: nothing left to tidy.
    if (!cluster) return 'gone';
    // Paused or being deleted: Cluster API's contract is to leave it as it is.
    if (frozenBy(cluster)) return 'frozen';
    // Not up yet: the Cluster's next change (Cluster API reporting it provisioned) comes back here.
    if (notConnectableYet(cluster)) return 'provisioning';
    const remote = this.opts.clusters.get(namespace, name);
    if (!remote)
      throw new Error(this.opts.clusters.problem(namespace, name) ?? `no client for cluster ${key}`);
    const scope: Scope = { key, namespace, cluster, remote };
    const observed = await this.observe(scope);
    if (!observed) return 'no-configmap';
    const plan = this.plan(scope, observed);
    if (!plan.changed) return 'current';
    await this.apply(scope, observed.configMap, plan.corefile);
    this.report(scope, plan);
    return plan.forwards ? 'patched' : 'removed';
  }

  /** Observe: the Corefile, and the dns-server's Service, from the cluster's informers. */
  private async observe({ key, remote }: Scope): Promise<Observation | undefined> {
    const services = remote.informer(SERVICES, this.opts.recordsNamespace);
    const configMaps = remote.informer(COREDNS_CONFIGMAPS, COREDNS_NAMESPACE);
    const why = await remote.synced([services, configMaps], this.opts.firstSyncTimeoutMs ?? 10_000);
    if (why) throw new Error(`cluster ${key} unreachable: ${why}`);
    const configMap = configMaps.get(COREDNS_CONFIGMAP, COREDNS_NAMESPACE);
    const corefile = configMap?.data?.[COREFILE_KEY];
    if (!configMap || corefile === undefined) return undefined;
    const service = services.get(DNS_SERVER_SERVICE, this.opts.recordsNamespace);
    return { configMap, corefile, target: service ? forwardTarget(service) : undefined };
  }

  /** Plan: the Corefile with our blocks as they should be; one we cannot edit safely is left alone, terminally. */
  private plan({ key, namespace, cluster }: Scope, observed: Observation): CorefilePlan {
    // Opting out deselects the cluster: our block goes (the transform never touches anything else),
    // and nothing else of that Corefile is ours to change.
    const optedOut = cluster.metadata.annotations?.[COREDNS_ANNOTATION] === COREDNS_UNMANAGED;
    const target = !this.opts.cleanup && !optedOut ? observed.target : undefined;
    try {
      return planCorefile({
        corefile: observed.corefile,
        target,
        zones: this.opts.zones,
        clustersetZones: this.opts.clustersetZones ?? [],
        clustersetZone: target !== undefined ? this.opts.clustersetZone?.(namespace) : undefined,
      });
    } catch (err) {
      if (!(err instanceof CorefileError)) throw err;
      const message = `kube-system/coredns of cluster ${key} left unchanged: ${err.message}`;
      this.opts.events.warning(eventTarget(cluster), `Corefile${err.reason}`, message);
      // Nothing to retry until the Corefile itself changes, which its watch reports.
      throw new TerminalError(message);
    }
  }

  /** Apply: replace the ConfigMap with the resourceVersion read, so an edit not seen is never overwritten. */
  private async apply({ key, remote }: Scope, configMap: V1ConfigMap, corefile: string): Promise<void> {
    try {
      // Through the cluster's write gate, as every other write: rate-limited, and fenced by the shard.
      await remote.write(
        `update ${COREDNS_NAMESPACE}/${COREDNS_CONFIGMAP}`,
        this.opts.requestTimeoutMs ?? 10_000,
        () =>
          remote.core.replaceNamespacedConfigMap({
            name: COREDNS_CONFIGMAP,
            namespace: COREDNS_NAMESPACE,
            // Without managedFields (the cache keeps only their managers): the API server keeps the live ones.
            body: {
              ...configMap,
              metadata: { ...configMap.metadata, managedFields: undefined },
              data: { ...configMap.data, [COREFILE_KEY]: corefile },
            } as V1ConfigMap,
          }),
      );
    } catch (err) {
      // 409: the Corefile changed since we read it; the watch brings the new text and we run again.
      throw new Error(`update kube-system/coredns in cluster ${key}: ${errorText(err)}`);
    }
  }

  /** Report: a log line and an Event on the Cluster (the Corefile has no status of ours). */
  private report({ key, cluster }: Scope, plan: CorefilePlan): void {
    const what = plan.forwards
      ? `forwards ${plan.forwardedZones.join(' and ')} to ${plan.forwards}`
      : `no longer forwards ${this.opts.zones.join(' and ')}`;
    this.opts.log.info('Corefile updated', { cluster: key, change: what });
    this.opts.events.normal(
      eventTarget(cluster),
      plan.forwards ? 'CorefilePatched' : 'CorefileRestored',
      `CoreDNS ${what}`,
    );
  }
}

/** Where CoreDNS should send the zone: the annotation when set, else the Service's cluster IP and DNS port. */
export function forwardTarget(service: V1Service): string | undefined {
  const override = service.metadata?.annotations?.[FORWARD_ADDRESS_ANNOTATION]?.trim();
  if (override) return override;
  const ip = service.spec?.clusterIP;
  if (!ip || ip === 'None') return undefined;
  const port = service.spec?.ports?.find((p) => (p.protocol ?? 'TCP') === 'UDP')?.port ?? 53;
  const host = ip.includes(':') ? `[${ip}]` : ip;
  return port === 53 ? ip : `${host}:${port}`;
}

function eventTarget(cluster: CorefileCluster): EventTarget {
  return clusterEventTarget(cluster.metadata);
}
