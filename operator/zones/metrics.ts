// The DNSZone controller's own metrics, registered on the manager's registry.
import { registerRead, type Registry } from '../../runtime/metrics.js';
import type { UnwatchedSecret } from './key-secrets.js';

export class ZoneMetrics {
  /** Per DNSZone in Audit: how many served names Enforce would withdraw. */
  readonly auditWithdrawals = new Map<string, { zone: string; count: number }>();
  /** Per DNSZone: 1 when Ready is True. */
  readonly ready = new Map<string, { zone: string; ready: boolean }>();
  /** Per DNSZone with spec.nameservers.expose: the exposed dns-servers in its NS set now. */
  readonly exposedNameservers = new Map<string, { zone: string; count: number }>();

  /**
   * @param unwatched the key Secrets DNSZones name whose watch does not run (secret-watches.ts):
   *   a rotation there waits for the timer, which the log says once and this metric says for as
   *   long as it lasts
   */
  constructor(registry: Registry, unwatched: () => UnwatchedSecret[] = () => []) {
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
    registerRead(
      registry,
      'capi_dns_zone_secret_unwatched',
      "A key Secret some DNSZone names (DNSSEC key, TSIG key) that the operator cannot watch: 1 while its watch does not run, so that a rotation is read only on a timer (30 s DNSSEC, 15 s TSIG). status: the API server's HTTP status (403: RBAC), empty if it did not answer.",
      'gauge',
      ['namespace', 'secret', 'status'],
      () =>
        unwatched().map(({ ref, status }) => [
          { namespace: ref.namespace, secret: ref.name, status: status === undefined ? '' : String(status) },
          1,
        ]),
    );
  }

  forget(name: string): void {
    this.auditWithdrawals.delete(name);
    this.ready.delete(name);
    this.exposedNameservers.delete(name);
  }
}
