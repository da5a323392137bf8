// Where the fleet's clusters come from, as multicluster-runtime's providers:
// the one seam an inventory plugs into. Cluster API is the one there is
// (capi-provider.ts); SIG Multicluster's ClusterProfile would be another.
// Controllers and the ClusterCache ask the provider, never an inventory's own
// informers: which clusters a namespace has, what changed of them, whether a
// client may be built yet, and with which credentials.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ChangeType } from '../runtime/informer.js';
import type { ClusterObject } from './lifecycle.js';

/** A cluster of the fleet as the controllers read it: its name, namespace, labels and lifecycle. */
export type FleetCluster = ClusterObject & KubernetesObject;

/** A kubeconfig to build a client from, read from wherever the inventory keeps it. */
export interface KubeconfigSource {
  /** The kubeconfig's text: untrusted input (kubeconfig.ts checks it). */
  text: string;
  /** Where it was read, for messages: `Secret ns/name, key "value"`. */
  from: string;
  /** Changes whenever the text does: a client built from another one is rebuilt. */
  fingerprint: string;
}

export interface ClusterProvider {
  /** The inventory: "cluster-api". */
  readonly inventory: string;
  /** The clusters of a namespace (every namespace when undefined) that exist now. */
  list(namespace?: string): readonly FleetCluster[];
  get(namespace: string, name: string): FleetCluster | undefined;
  /** The clusters of a namespace that exist, and those gone but still kept, frozen (a paused Cluster moved away). */
  listKept(namespace: string): readonly FleetCluster[];
  getKept(namespace: string, name: string): FleetCluster | undefined;
  /** A cluster changed in what the operator acts on (labels, lifecycle, connectability), or went. */
  onChange(listener: (type: ChangeType, cluster: FleetCluster) => void): void;
  /** A kept cluster's grace ended: what it published goes now. */
  onGraceEnded(listener: (namespace: string) => void): void;
  /** Why no client may be built for the cluster yet (not provisioned, gone), or undefined. */
  notConnectableYet(namespace: string, name: string): string | undefined;
  /** The credentials to connect with, or why there are none. */
  kubeconfig(namespace: string, name: string): KubeconfigSource | { problem: string };
  /** The credentials of a cluster changed: its client is rebuilt if they differ from what it was built with. */
  onCredentialsChange(listener: (namespace: string, name: string) => void): void;
  stop(): void;
}
