// SIG Multicluster's inventory (KEP-4322) as a ClusterProvider
// (--inventory=cluster-profile), as multicluster-runtime's ClusterProfile
// provider: the ClusterProfiles of the management namespaces are the fleet's
// clusters, selected by their labels like Clusters; their credentials come from
// the access provider, implemented in process (profile-access.ts). A profile
// whose ControlPlaneHealthy is False is taken as unreachable (no client: what
// it published is kept, as for any cluster that does not answer), and so is
// one whose access provider asks for what capi-dns does not do, with the
// reason in the GatewayDNS and ServiceExport status.
import { createHash } from 'node:crypto';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import {
  CLUSTER_MANAGER_LABEL,
  CLUSTERPROFILE_PLURAL,
  INVENTORY_GROUP,
  INVENTORY_VERSION,
  PROFILE_CONDITIONS,
  type ClusterProfile,
} from '../../../api/index.js';
import type { ChangeType, WatchedResource } from '../runtime/informer.js';
import type { Logger } from '../runtime/log.js';
import { notConnectableYet } from './lifecycle.js';
import { accessPlanOf, kubeconfigFromSecret, type SecretRef } from './profile-access.js';
import { ProfileSecrets } from './profile-secrets.js';
import type { ClusterProvider, FleetCluster, KubeconfigSource } from './provider.js';
import { customResourceType, type InformerCache } from './resource.js';

/** ClusterProfiles, read by the manager's cache (shared with the producer, operator/clusterprofiles). */
export const CLUSTER_PROFILES = customResourceType<ClusterProfile & KubernetesObject>({
  kind: 'ClusterProfile',
  group: INVENTORY_GROUP,
  version: INVENTORY_VERSION,
  plural: CLUSTERPROFILE_PLURAL,
});

export interface ProfileProviderOptions {
  cache: InformerCache;
  kc: KubeConfig;
  /** Namespaces besides a profile's own where its credentials Secret may be. */
  otherSecretNamespaces?: readonly string[];
  /** Profiles this cluster manager keeps are left out (read as Cluster API Clusters: --inventory=both). */
  skipClusterManager?: string;
  secretRefreshMs?: number;
  log: Logger;
}

export class ProfileClusterProvider implements ClusterProvider {
  readonly inventory = 'cluster-profile';
  private readonly profiles: WatchedResource<ClusterProfile & KubernetesObject>;
  private readonly secrets: ProfileSecrets;
  private readonly otherNamespaces: ReadonlySet<string>;
  private readonly credentialListeners: ((namespace: string, name: string) => void)[] = [];
  /** The profile as the controllers read it, by namespace/name, kept while its resourceVersion is. */
  private readonly views = new Map<string, { version?: string; view: FleetCluster }>();

  constructor(private readonly opts: ProfileProviderOptions) {
    this.profiles = opts.cache.informer(CLUSTER_PROFILES);
    this.otherNamespaces = new Set(opts.otherSecretNamespaces ?? []);
    this.secrets = new ProfileSecrets({
      kc: opts.kc,
      refreshMs: opts.secretRefreshMs ?? 30_000,
      log: opts.log,
      onChange: (ref) => this.secretChanged(ref),
    });
    // Health and credentials: a change drops the client if it no longer matches (ClusterCache).
    const seen = new Map<string, string>();
    this.profiles.onChange((type, p) => {
      const key = `${p.metadata?.namespace}/${p.metadata?.name}`;
      const now =
        type === 'delete' ? '' : JSON.stringify([unhealthy(p), accessPlanOf(p, this.otherNamespaces)]);
      if (seen.get(key) === now) return;
      if (type === 'delete') seen.delete(key);
      else seen.set(key, now);
      for (const l of this.credentialListeners) l(p.metadata?.namespace ?? '', p.metadata?.name ?? '');
    });
  }

  list(namespace?: string): readonly FleetCluster[] {
    return this.profiles
      .list(namespace)
      .filter((p) => this.counted(p))
      .map((p) => this.viewOf(p));
  }

  get(namespace: string, name: string): FleetCluster | undefined {
    const p = this.profiles.get(name, namespace);
    return p && this.counted(p) ? this.viewOf(p) : undefined;
  }

  listKept(namespace: string): readonly FleetCluster[] {
    return this.list(namespace);
  }

  getKept(namespace: string, name: string): FleetCluster | undefined {
    return this.get(namespace, name);
  }

  onChange(listener: (type: ChangeType, cluster: FleetCluster) => void): void {
    const seen = new Map<string, string>();
    this.profiles.onChange((type, p) => {
      const key = `${p.metadata?.namespace}/${p.metadata?.name}`;
      if (type === 'delete' || !this.counted(p)) {
        if (seen.delete(key)) listener('delete', this.viewOf(p));
        return;
      }
      const now = JSON.stringify([
        p.metadata?.labels ?? {},
        p.metadata?.deletionTimestamp ?? null,
        unhealthy(p),
      ]);
      if (seen.get(key) === now) return;
      const added = !seen.has(key);
      seen.set(key, now);
      listener(added ? 'add' : 'update', this.viewOf(p));
    });
  }

  onGraceEnded(): void {
    // A profile has no paused departure: nothing is kept after it goes.
  }

  notConnectableYet(namespace: string, name: string): string | undefined {
    const p = this.profiles.get(name, namespace);
    if (!p || !this.counted(p)) return `no ClusterProfile ${namespace}/${name} in the management cluster`;
    return notConnectableYet(this.viewOf(p)) ?? unhealthy(p);
  }

  kubeconfig(namespace: string, name: string): KubeconfigSource | { problem: string } {
    const p = this.profiles.get(name, namespace);
    if (!p) return { problem: `no ClusterProfile ${namespace}/${name}` };
    const down = unhealthy(p);
    if (down) return { problem: down };
    const plan = accessPlanOf(p, this.otherNamespaces);
    if ('problem' in plan) return { problem: `ClusterProfile ${namespace}/${name}: ${plan.problem}` };
    const secret = this.secrets.get(plan.secret);
    if (!secret) return { problem: `Secret ${plan.secret.namespace}/${plan.secret.name} not read yet` };
    if (secret.error) return { problem: secret.error };
    const built = kubeconfigFromSecret(plan, secret.data);
    if ('problem' in built) return { problem: `ClusterProfile ${namespace}/${name}: ${built.problem}` };
    return {
      text: built.text,
      from: `ClusterProfile ${namespace}/${name} (${plan.kind === 'token' ? 'secretreader' : 'kubeconfig-secretreader'}, Secret ${plan.secret.namespace}/${plan.secret.name})`,
      fingerprint: createHash('sha256').update(built.text).digest('hex'),
    };
  }

  onCredentialsChange(listener: (namespace: string, name: string) => void): void {
    this.credentialListeners.push(listener);
  }

  stop(): void {
    this.secrets.stop();
  }

  /** Whether the profile is one of this inventory's clusters (not one this operator's Cluster API side counts). */
  private counted(p: ClusterProfile): boolean {
    const skip = this.opts.skipClusterManager;
    return !skip || p.metadata.labels?.[CLUSTER_MANAGER_LABEL] !== skip;
  }

  private viewOf(p: ClusterProfile & KubernetesObject): FleetCluster {
    const key = `${p.metadata.namespace}/${p.metadata.name}`;
    const cached = this.views.get(key);
    if (cached && cached.version === p.metadata.resourceVersion) return cached.view;
    // Only what the controllers read of a cluster, in the Cluster API lifecycle's terms they share
    // (lifecycle.ts): never paused; "provisioned" while the profile is not Joined=False.
    const joined =
      p.status?.conditions?.find((c) => c.type === PROFILE_CONDITIONS.Joined)?.status !== 'False';
    const view: FleetCluster = {
      apiVersion: `${INVENTORY_GROUP}/${INVENTORY_VERSION}`,
      kind: 'ClusterProfile',
      metadata: {
        name: p.metadata.name,
        namespace: p.metadata.namespace,
        uid: p.metadata.uid,
        labels: p.metadata.labels,
        annotations: p.metadata.annotations,
        ...(p.metadata.deletionTimestamp ? { deletionTimestamp: p.metadata.deletionTimestamp } : {}),
      },
      status: {
        initialization: { infrastructureProvisioned: joined },
        conditions: joined
          ? []
          : [
              {
                type: 'InfrastructureReady',
                status: 'False',
                reason: 'NotJoined',
                message: 'the ClusterProfile is Joined=False',
              },
            ],
      },
    };
    this.views.set(key, { version: p.metadata.resourceVersion, view });
    return view;
  }

  private secretChanged(ref: SecretRef): void {
    for (const p of this.profiles.list()) {
      const plan = accessPlanOf(p, this.otherNamespaces);
      if ('problem' in plan) continue;
      if (plan.secret.namespace === ref.namespace && plan.secret.name === ref.name)
        for (const l of this.credentialListeners) l(p.metadata.namespace ?? '', p.metadata.name);
    }
  }
}

/** Why the profile is taken as unreachable: its ControlPlaneHealthy is False. */
function unhealthy(p: ClusterProfile): string | undefined {
  const c = p.status?.conditions?.find((x) => x.type === PROFILE_CONDITIONS.ControlPlaneHealthy);
  if (c?.status !== 'False') return undefined;
  return `ClusterProfile ${p.metadata.namespace}/${p.metadata.name}: ControlPlaneHealthy is False (${c.reason}: ${c.message}): taken as unreachable, what it published is kept`;
}
