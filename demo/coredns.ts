// A workload cluster's CoreDNS, played by a real CoreDNS process on this
// machine. Like kubelet projecting a ConfigMap volume, the Corefile that
// CoreDNS reads is kept equal to the cluster's kube-system/coredns ConfigMap,
// so only the operator's patch of that ConfigMap makes it forward the zone.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CoreV1Api, KubeConfig, makeInformer, type V1ConfigMap } from '@kubernetes/client-node';
import type { ProcessGroup, ManagedProcess } from './processes.js';

export const COREDNS_NAMESPACE = 'kube-system';
export const COREDNS_CONFIGMAP = 'coredns';

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
    if (cm.metadata?.name !== COREDNS_CONFIGMAP) return;
    const text = cm.data?.Corefile;
    if (text === undefined) return;
    // Atomic replace: CoreDNS's reload plugin must never read half a file.
    writeFileSync(`${corefilePath}.tmp`, text);
    renameSync(`${corefilePath}.tmp`, corefilePath);
  };
  project(await api.readNamespacedConfigMap({ name: COREDNS_CONFIGMAP, namespace: COREDNS_NAMESPACE }));
  // makeInformer takes no field selector: watch kube-system, keep only ours.
  const informer = makeInformer(opts.kc, `/api/v1/namespaces/${COREDNS_NAMESPACE}/configmaps`, () =>
    api.listNamespacedConfigMap({ namespace: COREDNS_NAMESPACE }),
  );
  informer.on('add', project);
  informer.on('update', project);
  let stopped = false;
  // The projection outlives API server restarts: a watch error restarts it.
  informer.on('error', () => {
    if (!stopped) setTimeout(() => !stopped && void informer.start().catch(() => undefined), 1000);
  });
  await informer.start();
  const process = group.start(`coredns-${opts.cluster}`, opts.binary, ['-conf', corefilePath]);
  return {
    process,
    corefilePath,
    async stop() {
      stopped = true;
      await informer.stop();
      await group.stop(process);
    },
  };
}
