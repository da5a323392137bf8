// A DNSZone's own writes in the management cluster: the status (a merge patch
// of the whole status, only when it differs) and the finalizers (guarded by
// the resourceVersion), as the GatewayDNS patcher makes them.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { DNSZONE_PLURAL, GROUP, VERSION, type DNSZone, type DNSZoneStatus } from '../../api/index.js';
import { sameJson, withTimeout } from '../manager/runtime/equal.js';

export class DnsZonePatcher {
  private readonly custom: CustomObjectsApi;

  constructor(
    management: KubeConfig,
    private readonly requestTimeoutMs: number,
  ) {
    this.custom = management.makeApiClient(CustomObjectsApi);
  }

  async patchStatus(zone: DNSZone, status: DNSZoneStatus): Promise<void> {
    if (sameJson(zone.status ?? {}, status)) return;
    await withTimeout(
      this.custom.patchClusterCustomObjectStatus(
        { ...objectOf(zone), body: { status } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
      this.requestTimeoutMs,
      `status of dnszone ${zone.metadata.name}`,
    );
  }

  async patchFinalizers(zone: DNSZone, finalizers: string[]): Promise<void> {
    await withTimeout(
      this.custom.patchClusterCustomObject(
        // The resourceVersion makes this fail (and retry) if someone else changed finalizers meanwhile.
        {
          ...objectOf(zone),
          body: { metadata: { finalizers, resourceVersion: zone.metadata.resourceVersion } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
      this.requestTimeoutMs,
      `finalizers of dnszone ${zone.metadata.name}`,
    );
  }
}

function objectOf(zone: DNSZone) {
  return { group: GROUP, version: VERSION, plural: DNSZONE_PLURAL, name: zone.metadata.name };
}
