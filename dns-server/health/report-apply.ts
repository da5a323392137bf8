// How this replica writes its probe report (report.ts) and its served serials
// (serial-report.ts): a server-side apply of
// the ConfigMap with the dns-server's one field manager, so that a restart
// that reports the same view changes nothing. Kubernetes mode with --pod-name
// only; the client library is loaded then.
import type { KubeConfig, V1ConfigMap } from '@kubernetes/client-node';
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

/** This replica's report writer, applying to the cluster of `kc`. */
export async function probeReportWriter(
  kc: KubeConfig,
  pod: ReportPod,
  log: Logger,
): Promise<ProbeReportWriter> {
  return new ProbeReportWriter({ pod, apply: await serverSideApply(kc), log });
}

/** This replica's served-serials writer, applying to the cluster of `kc`. */
export async function serialReportWriter(
  kc: KubeConfig,
  pod: ReportPod,
  log: Logger,
): Promise<SerialReportWriter> {
  return new SerialReportWriter({ pod, apply: await serverSideApply(kc), log });
}
