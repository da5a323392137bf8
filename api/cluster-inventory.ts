// SIG Multicluster's cluster inventory (KEP-4322, sigs.k8s.io/cluster-inventory-api v0.1.2):
// the ClusterProfile as the operator writes it (--cluster-profiles=produce) and reads it
// (--inventory=cluster-profile). Types are of the fields used; the CRD (crds/inventory/) is
// upstream's, byte for byte. Names follow the module's Go constants where the KEP's text and
// the Go differ (ADR 0214).

export const INVENTORY_GROUP = 'multicluster.x-k8s.io';
export const INVENTORY_VERSION = 'v1alpha1';
export const CLUSTERPROFILE_PLURAL = 'clusterprofiles';

/** The label naming the cluster manager that keeps a ClusterProfile (Go: LabelClusterManagerKey). */
export const CLUSTER_MANAGER_LABEL = 'x-k8s.io/cluster-manager';
/** The cluster manager name capi-dns writes by default (--cluster-manager-name). */
export const DEFAULT_CLUSTER_MANAGER = 'cluster-api';

/** The condition types of a ClusterProfile (KEP-4322: ControlPlaneHealthy and Joined). */
export const PROFILE_CONDITIONS = {
  ControlPlaneHealthy: 'ControlPlaneHealthy',
  Joined: 'Joined',
} as const;

/** The access provider of the module's kubeconfig-secretreader plugin, and of its secretreader plugin. */
export const KUBECONFIG_SECRETREADER = 'kubeconfig-secretreader';
export const SECRETREADER = 'secretreader';
/** The kubeconfig extension whose content pkg/access passes to the exec plugin as its cluster config. */
export const EXEC_EXTENSION = 'client.authentication.k8s.io/exec';
/** KEP 5339's extensions: arguments and environment for the exec plugin, from the profile. */
export const ADDITIONAL_ARGS_EXTENSION = 'clusterprofiles.multicluster.x-k8s.io/exec/additional-args';
export const ADDITIONAL_ENVS_EXTENSION = 'clusterprofiles.multicluster.x-k8s.io/exec/additional-envs';

/** A kubeconfig cluster entry as the CRD carries it (clientcmd/api/v1 Cluster, kebab-case keys). */
export interface ProfileCluster {
  server: string;
  'certificate-authority-data'?: string;
  'tls-server-name'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'certificate-authority'?: string;
  'proxy-url'?: string;
  'disable-compression'?: boolean;
  extensions?: { name: string; extension: Record<string, unknown> }[];
}

export interface AccessProvider {
  name: string;
  cluster?: ProfileCluster;
}

export interface ProfileProperty {
  name: string;
  value: string;
  lastObservedTime?: string;
}

export interface ProfileCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export interface ClusterProfileStatus {
  conditions?: ProfileCondition[];
  version?: { kubernetes?: string };
  properties?: ProfileProperty[];
  accessProviders?: AccessProvider[];
  /** The deprecated name of accessProviders: still read (pkg/access reads both). */
  credentialProviders?: AccessProvider[];
}

export interface ClusterProfile {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    generation?: number;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
    deletionTimestamp?: string;
  };
  spec: { displayName?: string; clusterManager: { name: string } };
  status?: ClusterProfileStatus;
}
