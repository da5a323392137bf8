// Reconciles one DNSZone, in the shape of the GatewayDNS reconciler: a short
// reconcile() fetches, defers the one status patch, and hands off to
// reconcileDelete (wait until what it governed is withdrawn, then drop the
// finalizer) or reconcileNormal (finalizer; the status, pure, in status.ts).
// The GatewayDNS claims read the delegations in force from status.enforced,
// so this status is what puts a spec in force (ADR 0213).
import {
  DNSSEC_KEYS_SECRET,
  DNSZONE_FINALIZER,
  type DeclaredZone,
  type DNSZone,
  type DNSZoneStatus,
  type EnforcedZone,
  type ServedSerials,
} from '../../api/index.js';
import { ZONE_CONDITIONS } from '../model/conditions.js';
import { governingZone, inZone } from '../model/delegation.js';
import type { Logger } from '../manager/runtime/log.js';
import type { Outcome } from '../manager/runtime/workqueue.js';
import type { ZoneMetrics } from './metrics.js';
import type { DnsZonePatcher } from './patcher.js';
import type { DeclaredKeys, ZoneDeclarer } from './declare.js';
import type { ZoneKeyRead, ZoneKeyReader } from './keys.js';
import type { SecretRef } from './key-secrets.js';
import { zoneNameservers, type ZoneNameservers } from './nameservers.js';
import { checkTransfer, type SecretData, type TransferVerdict } from './transfer.js';
import { withDeferredStatus } from '../manager/runtime/deferred-status.js';
import {
  clustersServing,
  declaredZones,
  declaredZonesFor,
  zonesInForce,
  zoneStatus,
  type ServedNames,
} from './status.js';

export interface ZoneReconcilerOptions {
  getZone: (name: string) => DNSZone | undefined;
  listZones: () => readonly DNSZone[];
  /** The custom names each GatewayDNS serves, from their status. */
  served: () => readonly ServedNames[];
  namespaceLabels: (namespace: string) => Record<string, string> | undefined;
  /** The zones the flags declare (--domain-suffix, --zone): their names stay served under the first-claim rule. */
  flagZones: readonly string[];
  patcher: DnsZonePatcher;
  /** Tells every workload cluster's dns-server the zones in force. */
  declarer: ZoneDeclarer;
  /** Per workload cluster ("namespace/name"): its dns-server replicas' serial reports. */
  servedSerials: (
    clusters: readonly { namespace: string; name: string }[],
  ) => Promise<ReadonlyMap<string, readonly ServedSerials[]>>;
  /** The signing keys of the DNSZones with spec.dnssec.enabled, on the management cluster. */
  keys: ZoneKeyReader;
  /** How soon a key is read again when its Secret is not watched. */
  keyRetryMs?: number;
  /**
   * Whether a change of the management-cluster Secret re-queues the DNSZones naming it (the
   * controller's watch of it runs). One that is not (no list/watch in its namespace) is read again
   * on a timer instead.
   */
  watched: (secret: SecretRef) => boolean;
  /** A Secret's data on the management cluster (spec.transfer.tsigSecretRef); undefined when it does not exist. */
  readSecret: (namespace: string, name: string) => Promise<SecretData>;
  metrics: ZoneMetrics;
  log: Logger;
  /**
   * How long a deleted DNSZone waits for the GatewayDNS to withdraw the names it governed before
   * its finalizer goes anyway (one whose status cannot be written must not hold it forever).
   */
  withdrawGraceMs?: number;
  /** How often a deleted DNSZone looks again while names it governed are still served. */
  withdrawPollMs?: number;
}

interface Scope {
  zone: DNSZone;
  log: Logger;
  status?: DNSZoneStatus;
}

export class ZoneReconciler {
  constructor(private readonly opts: ZoneReconcilerOptions) {}

  async reconcile(name: string): Promise<Outcome | void> {
    const log = this.opts.log.with({ dnszone: name });
    const zone = this.opts.getZone(name);
    if (!zone) return this.opts.metrics.forget(name);
    const scope: Scope = { zone, log };
    return withDeferredStatus(
      () => (zone.metadata.deletionTimestamp ? this.reconcileDelete(scope) : this.reconcileNormal(scope)),
      async () => {
        if (!scope.status) return;
        const ready = scope.status.conditions?.find((c) => c.type === ZONE_CONDITIONS.Ready);
        this.opts.metrics.ready.set(name, { zone: zone.spec.zone, ready: ready?.status === 'True' });
        await this.opts.patcher.patchStatus(zone, scope.status);
      },
      log,
    );
  }

  private async reconcileNormal(scope: Scope): Promise<Outcome | void> {
    const { zone, log } = scope;
    if (!zone.metadata.finalizers?.includes(DNSZONE_FINALIZER))
      await this.opts.patcher.patchFinalizers(zone, [...(zone.metadata.finalizers ?? []), DNSZONE_FINALIZER]);
    // The spec first (pure): what it puts in force is what the dns-servers are told.
    const transfer = zone.spec.transfer
      ? checkTransfer(
          zone.spec.transfer,
          await this.opts.readSecret(
            zone.spec.transfer.tsigSecretRef.namespace,
            zone.spec.transfer.tsigSecretRef.name,
          ),
        )
      : undefined;
    const inForce = this.statusOf(zone, undefined, undefined, undefined, transfer);
    const withThis = this.opts
      .listZones()
      .map((z) => (z.metadata.name === zone.metadata.name ? { ...z, status: inForce } : z));
    const nameserversOf = await this.nameservers(withThis);
    const signing = await this.signing(withThis);
    const declared = declaredZones(withThis, nameserversOf, signing.dnssecOf);
    const declarations = await this.opts.declarer.declare(
      (namespace) => declaredZonesFor(namespace, withThis, declared, nameserversOf),
      signing.keys,
      await this.tsigKeys(withThis, zone, transfer),
    );
    const key = zone.spec.dnssec?.enabled
      ? (signing.read.get(inForce.enforced?.zone ?? '') ??
        (await this.opts.keys.read(zone, inForce.enforced?.zone ?? zone.spec.zone)))
      : undefined;
    if (key && 'reason' in key && key.reason !== this.signedReason(zone))
      log.warn('DNSSEC key refused; the zone stays served as it was', {
        reason: key.reason,
        message: key.message,
      });
    const status = this.statusOf(
      zone,
      clustersServing(inForce.enforced?.zone, declarations),
      inForce.enforced?.expose ? nameserversOf(inForce.enforced) : undefined,
      key,
      transfer,
    );
    const ready = status.conditions?.find((c) => c.type === ZONE_CONDITIONS.Ready);
    if (
      ready?.status === 'False' &&
      ready.reason !== zone.status?.conditions?.find((c) => c.type === ZONE_CONDITIONS.Ready)?.reason
    )
      log.warn('DNSZone not in force as written', { reason: ready.reason, message: ready.message });
    if (status.audit?.length)
      this.opts.metrics.auditWithdrawals.set(zone.metadata.name, {
        zone: zone.spec.zone,
        count: status.audit.length,
      });
    else this.opts.metrics.auditWithdrawals.delete(zone.metadata.name);
    if (status.enforced?.expose)
      this.opts.metrics.exposedNameservers.set(zone.metadata.name, {
        zone: zone.spec.zone,
        count: status.nameservers?.length ?? 0,
      });
    else this.opts.metrics.exposedNameservers.delete(zone.metadata.name);
    scope.status = status;
    // A watched Secret's change re-queues this zone (the controller). One the operator may not
    // watch is read again on a timer (a refused one sooner), so that a rotation or a fix still
    // arrives, later; the watch's failure is logged (secret-watches.ts).
    const keyUnwatched = zone.spec.dnssec?.enabled && !this.opts.watched(this.opts.keys.secretOf(zone));
    const tsigUnwatched = zone.spec.transfer && !this.opts.watched(zone.spec.transfer.tsigSecretRef);
    const retries = [
      ...(key && keyUnwatched ? [this.opts.keyRetryMs ?? 30_000] : []),
      ...(transfer && tsigUnwatched ? [transfer.ok ? 15_000 : 5_000] : []),
    ];
    if (retries.length) return { requeueAfterMs: Math.min(...retries) };
  }

  /**
   * The GatewayDNS take a DNSZone being deleted as gone: the names it governed leave their record
   * sets (or, in a zone the flags declare too, go back to the first claim). The finalizer stays
   * until no GatewayDNS serves such a name any more, or the grace ends.
   */
  private async reconcileDelete(scope: Scope): Promise<Outcome | void> {
    const { zone, log } = scope;
    if (!zone.metadata.finalizers?.includes(DNSZONE_FINALIZER)) return;
    const left = this.stillServed(zone);
    const since = new Date(zone.metadata.deletionTimestamp ?? 0).getTime();
    const grace = this.opts.withdrawGraceMs ?? 30_000;
    if (left.length && Date.now() - since < grace) {
      scope.status = this.statusOf(zone);
      return { requeueAfterMs: this.opts.withdrawPollMs ?? 250 };
    }
    if (left.length)
      log.warn('DNSZone finalizer dropped with names still served', {
        names: left.slice(0, 10),
        graceMs: grace,
      });
    // Then the dns-servers stop serving it (unless the flags declare it, or another DNSZone does).
    const remaining = this.opts.listZones();
    const nameserversOf = await this.nameservers(remaining);
    const signing = await this.signing(remaining);
    const declared = declaredZones(remaining, nameserversOf, signing.dnssecOf);
    const declarations = await this.opts.declarer.declare(
      (namespace) => declaredZonesFor(namespace, remaining, declared, nameserversOf),
      signing.keys,
      await this.tsigKeys(remaining),
    );
    const failing = [...declarations].flatMap(([cluster, d]) =>
      'error' in d ? [`${cluster} (${d.error})`] : [],
    );
    if (failing.length) {
      scope.status = this.statusOf(zone);
      throw new Error(`dnszone ${zone.metadata.name}: zone not withdrawn from ${failing.join(', ')}`);
    }
    await this.opts.patcher.patchFinalizers(
      zone,
      (zone.metadata.finalizers ?? []).filter((f) => f !== DNSZONE_FINALIZER),
    );
    this.opts.metrics.forget(zone.metadata.name);
    log.info('DNSZone deleted: what it governed is withdrawn', { zone: zone.spec.zone });
  }

  private statusOf(
    zone: DNSZone,
    clusters?: DNSZoneStatus['clusters'],
    nameservers?: ZoneNameservers,
    key?: ZoneKeyRead,
    transfer?: TransferVerdict,
  ): DNSZoneStatus {
    return zoneStatus({
      zone,
      zones: this.opts.listZones(),
      served: this.opts.served(),
      namespaceLabels: this.opts.namespaceLabels,
      clusters,
      ...(nameservers ? { nameservers } : {}),
      ...(key ? { key } : {}),
      ...(transfer ? { transfer } : {}),
      now: new Date(),
    });
  }

  private signedReason(zone: DNSZone): string | undefined {
    return zone.status?.conditions?.find((c) => c.type === ZONE_CONDITIONS.Signed)?.reason;
  }

  /**
   * The keys of the signed zones in force (the governing DNSZone of each), read now (ADR 0106). A
   * key that cannot be read keeps its zone signed, with the key each cluster holds, if the zone
   * was signed before (status.ds); one never signed stays unsigned.
   */
  private async signing(zones: readonly DNSZone[]): Promise<{
    read: Map<string, ZoneKeyRead>;
    keys: DeclaredKeys;
    dnssecOf: (zone: string) => DeclaredZone['dnssec'];
  }> {
    const read = new Map<string, ZoneKeyRead>();
    const keys = new Map<string, string | undefined>();
    const dnssec = new Map<string, NonNullable<DeclaredZone['dnssec']>>();
    for (const { name, enforced } of zonesInForce(zones)) {
      if (read.has(enforced.zone)) continue;
      const zone = zones.find((z) => z.metadata.name === name);
      if (!zone?.spec.dnssec?.enabled) continue;
      const key = await this.opts.keys.read(zone, enforced.zone);
      read.set(enforced.zone, key);
      if (!('info' in key) && !zone.status?.ds?.length) continue;
      const dataKey = `${enforced.zone}.pem`;
      keys.set(dataKey, 'info' in key ? key.pem : undefined);
      dnssec.set(enforced.zone, { secret: DNSSEC_KEYS_SECRET, key: dataKey });
    }
    return { read, keys, dnssecOf: (zone) => dnssec.get(zone) };
  }

  /**
   * The NS set and glue of each zone with spec.nameservers.expose, from the exposed dns-servers as
   * the watches show them now, with the serial each serves (ADR 0215); no watch is opened while no
   * zone exposes.
   */
  private async nameservers(
    zones: readonly DNSZone[],
  ): Promise<(enforced: EnforcedZone) => ZoneNameservers | undefined> {
    if (!zones.some((z) => z.status?.enforced?.expose)) return () => undefined;
    const exposed = await this.opts.declarer.exposedServers();
    const serials = await this.opts.servedSerials(exposed.filter((s) => s.addresses.length));
    const withSerials = exposed.map((s) => ({
      ...s,
      serials: serials.get(`${s.namespace}/${s.name}`) ?? [],
    }));
    return (enforced) => zoneNameservers(enforced, withSerials, this.opts.namespaceLabels);
  }

  /**
   * The TSIG key (as tsig-keygen writes it) of each zone with a transfer in force, by zone name:
   * this zone's from its check this pass, the others' read again from their Secrets. A key that
   * cannot be read now is left out: the declarer keeps the one the workload clusters have.
   */
  private async tsigKeys(
    zones: readonly DNSZone[],
    current?: DNSZone,
    verdict?: TransferVerdict,
  ): Promise<Map<string, string>> {
    const keys = new Map<string, string>();
    for (const z of zones) {
      const enforced = z.status?.enforced;
      if (!enforced?.transfer || z.metadata.deletionTimestamp || keys.has(enforced.zone)) continue;
      if (z.metadata.name === current?.metadata.name) {
        if (verdict?.ok) keys.set(enforced.zone, verdict.keyText);
        continue;
      }
      const { namespace, name } = enforced.transfer.tsigSecretRef;
      try {
        const checked = checkTransfer(enforced.transfer, await this.opts.readSecret(namespace, name));
        if (checked.ok) keys.set(enforced.zone, checked.keyText);
      } catch (err) {
        this.opts.log.warn('TSIG Secret not read; the workload clusters keep the key they have', {
          dnszone: z.metadata.name,
          secret: `${namespace}/${name}`,
          error: (err as Error).message,
        });
      }
    }
    return keys;
  }

  /**
   * The served names the deleted DNSZone governed that nothing else allows now: not in a zone the
   * flags declare, nor governed by another DNSZone in force.
   */
  private stillServed(zone: DNSZone): string[] {
    const enforced = zone.status?.enforced;
    if (!enforced) return [];
    const others = zonesInForce(this.opts.listZones());
    return this.opts
      .served()
      .flatMap((s) => s.hostnames)
      .filter(
        (h) =>
          inZone(h, enforced.zone) &&
          !governingZone(h, others) &&
          !this.opts.flagZones.some((z) => inZone(h, z)),
      );
  }
}
