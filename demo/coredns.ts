// A workload cluster's CoreDNS, played by a real CoreDNS process on this
// machine. Like kubelet projecting a ConfigMap volume, the Corefile that
// CoreDNS reads is kept equal to the cluster's kube-system/coredns ConfigMap,
// so only the operator's patch of that ConfigMap makes it forward the zone.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CoreV1Api, KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { COREDNS_CONFIGMAP, COREDNS_NAMESPACE } from '../operator/corefile/kinds.js';
import { WatchedResource } from '../operator/manager/runtime/informer.js';
import type { ProcessGroup, ManagedProcess } from './processes.js';

/**
 * The Corefile a kubeadm cluster starts with, changed only where one machine
 * hosting several clusters needs it: the server binds its own loopback
 * address, the kubernetes plugin reaches its API server by kubeconfig, and
 * there is no upstream to forward to (this machine has no internet).
 */
export function initialCorefile(address: string, kubeconfigPath: string): string {
  return `.:53 {
    bind ${address}
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       kubeconfig ${kubeconfigPath}
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    cache 30
    loop
    reload 2s
    loadbalance
}
`;
}

/** Creates kube-system/coredns as the cluster's installer would, unless it exists. */
export async function ensureCoreDnsConfigMap(kc: KubeConfig, corefile: string): Promise<void> {
  const api = kc.makeApiClient(CoreV1Api);
  try {
    await api.readNamespacedConfigMap({ name: COREDNS_CONFIGMAP, namespace: COREDNS_NAMESPACE });
  } catch {
    await api.createNamespacedConfigMap({
      namespace: COREDNS_NAMESPACE,
      body: { metadata: { name: COREDNS_CONFIGMAP }, data: { Corefile: corefile } },
    });
  }
}

export interface CoreDnsProcess {
  process: ManagedProcess;
  corefilePath: string;
  stop(): Promise<void>;
}

/** Starts CoreDNS on the Corefile of the cluster's ConfigMap and keeps the file in step with it. */
export async function startCoreDns(
  group: ProcessGroup,
  opts: { cluster: string; kc: KubeConfig; dir: string; corefile: string; binary: string },
): Promise<CoreDnsProcess> {
  mkdirSync(opts.dir, { recursive: true });
  const corefilePath = path.join(opts.dir, 'Corefile');
  await ensureCoreDnsConfigMap(opts.kc, opts.corefile);
  const api = opts.kc.makeApiClient(CoreV1Api);
  const project = (cm: V1ConfigMap) => {
    const text = cm.data?.Corefile;
    if (text === undefined) return;
    // Atomic replace: CoreDNS's reload plugin must never read half a file.
    writeFileSync(`${corefilePath}.tmp`, text);
    renameSync(`${corefilePath}.tmp`, corefilePath);
  };
  project(await api.readNamespacedConfigMap({ name: COREDNS_CONFIGMAP, namespace: COREDNS_NAMESPACE }));
  // The operator's informer wrapper: it restarts after errors, so the projection outlives API server restarts.
  const fieldSelector = `metadata.name=${COREDNS_CONFIGMAP}`;
  const configMap = new WatchedResource<V1ConfigMap>({
    kc: opts.kc,
    path: `/api/v1/namespaces/${COREDNS_NAMESPACE}/configmaps`,
    list: () => api.listNamespacedConfigMap({ namespace: COREDNS_NAMESPACE, fieldSelector }),
    fieldSelector,
  });
  configMap.onChange((type, cm) => type !== 'delete' && project(cm));
  configMap.start();
  const process = group.start(`coredns-${opts.cluster}`, opts.binary, ['-conf', corefilePath]);
  return {
    process,
    corefilePath,
    async stop() {
      await configMap.stop();
      await group.stop(process);
    },
  };
}
