// How this replica writes its probe report (report.ts) and its served serials
// (serial-report.ts): a server-side apply of
// the ConfigMap with the dns-server's one field manager, so that a restart
// that reports the same view changes nothing. Kubernetes mode with --pod-name
// only; the client library is loaded then.
import type { KubeConfig, V1ConfigMap } from '@kubernetes/client-node';
import { httpStatus } from '../../runtime/kube-errors.js';
import type { Logger } from '../../runtime/log.js';
import { ProbeReportWriter, type ReportPod } from './report.js';
import { SerialReportWriter } from './serial-report.js';

export const FIELD_MANAGER = 'capi-dns-server';

/** Applies a ConfigMap server-side, taking over fields another manager set (force). */
export async function serverSideApply(kc: KubeConfig): Promise<(configMap: V1ConfigMap) => Promise<void>> {
  const { KubernetesObjectApi, PatchStrategy } = await import('@kubernetes/client-node');
  const objects = KubernetesObjectApi.makeApiClient(kc);
  return async (configMap) => {
    await objects.patch(configMap, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
  };
}

/** Deletes a ConfigMap; one already gone is no error. */
export async function configMapRemover(kc: KubeConfig): Promise<(configMap: V1ConfigMap) => Promise<void>> {
  const { CoreV1Api } = await import('@kubernetes/client-node');
  const core = kc.makeApiClient(CoreV1Api);
  return async (configMap) => {
    try {
      await core.deleteNamespacedConfigMap({
        name: configMap.metadata?.name ?? '',
        namespace: configMap.metadata?.namespace ?? '',
      });
    } catch (err) {
      if (httpStatus(err) !== 404) throw err;
    }
  };
}

/** How this replica's reports reach the cluster of `kc`; without a Pod to own them, removed on stop. */
async function writing(kc: KubeConfig, pod: ReportPod) {
  return {
    apply: await serverSideApply(kc),
    ...(pod.uid ? {} : { remove: await configMapRemover(kc) }),
  };
}

/** This replica's report writer, applying to the cluster of `kc`. */
export async function probeReportWriter(
  kc: KubeConfig,
  pod: ReportPod,
  log: Logger,
): Promise<ProbeReportWriter> {
  return new ProbeReportWriter({ pod, ...(await writing(kc, pod)), log });
}

/** This replica's served-serials writer, applying to the cluster of `kc`. */
export async function serialReportWriter(
  kc: KubeConfig,
  pod: ReportPod,
  log: Logger,
): Promise<SerialReportWriter> {
  return new SerialReportWriter({ pod, ...(await writing(kc, pod)), log });
}
