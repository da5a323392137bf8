// The DNSZone controller's own metrics, registered on the manager's registry.
import { registerRead, type Registry } from '../../runtime/metrics.js';

export class ZoneMetrics {
  /** Per DNSZone in Audit: how many served names Enforce would withdraw. */
  readonly auditWithdrawals = new Map<string, { zone: string; count: number }>();
  /** Per DNSZone: 1 when Ready is True. */
  readonly ready = new Map<string, { zone: string; ready: boolean }>();

  constructor(registry: Registry) {
    registerRead(
      registry,
      'capi_dns_zone_audit_withdrawals',
      'Served custom names a DNSZone in Audit would withdraw under Enforce (status.audit), per DNSZone.',
      'gauge',
      ['dnszone', 'zone'],
      () => [...this.auditWithdrawals].map(([dnszone, { zone, count }]) => [{ dnszone, zone }, count]),
    );
    registerRead(
      registry,
      'capi_dns_zone_ready',
      "A DNSZone's Ready condition: 1 True, 0 otherwise.",
      'gauge',
      ['dnszone', 'zone'],
      () => [...this.ready].map(([dnszone, { zone, ready }]) => [{ dnszone, zone }, ready ? 1 : 0]),
    );
  }

  forget(name: string): void {
    this.auditWithdrawals.delete(name);
    this.ready.delete(name);
  }
}
