// The DNSZone controller's own metrics, registered on the manager's registry.
import { registerRead, type Registry } from '../../runtime/metrics.js';

export class ZoneMetrics {
  /** Per DNSZone in Audit: how many served names Enforce would withdraw. */
  readonly auditWithdrawals = new Map<string, { zone: string; count: number }>();
  /** Per DNSZone: 1 when Ready is True. */
  readonly ready = new Map<string, { zone: string; ready: boolean }>();
  /** Per DNSZone with spec.nameservers.expose: the exposed dns-servers in its NS set now. */
  readonly exposedNameservers = new Map<string, { zone: string; count: number }>();

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
    registerRead(
      registry,
      'capi_dns_zone_exposed_nameservers',
      'Exposed dns-servers in the NS set of a DNSZone with spec.nameservers.expose (status.nameservers): 0 means the zone is unreachable from outside through them.',
      'gauge',
      ['dnszone', 'zone'],
      () => [...this.exposedNameservers].map(([dnszone, { zone, count }]) => [{ dnszone, zone }, count]),
    );
  }

  forget(name: string): void {
    this.auditWithdrawals.delete(name);
    this.ready.delete(name);
    this.exposedNameservers.delete(name);
  }
}
