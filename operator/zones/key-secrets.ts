// Which management-cluster Secrets a DNSZone names (pure): its signing key
// (spec.dnssec.keySecretRef, or the one generated as `<dnszone>-dnssec` into
// the key namespace, ADR 0106) and its transfer's TSIG key
// (spec.transfer.tsigSecretRef, ADR 0216). The reconciler reads them by
// these names; the controller watches them (secret-watches.ts) and maps a
// change of one back to the DNSZones that name it.
import type { DNSZone } from '../../api/index.js';

export interface SecretRef {
  namespace: string;
  name: string;
}

/** A named Secret whose watch does not run, with the HTTP status of its last failure if the API server answered. */
export interface UnwatchedSecret {
  ref: SecretRef;
  status: number | undefined;
}

/** The Secret a DNSZone's signing key is in, named or generated. */
export function keySecretOf(zone: DNSZone, keyNamespace: string): SecretRef & { generated: boolean } {
  const ref = zone.spec.dnssec?.keySecretRef;
  return ref
    ? { namespace: ref.namespace, name: ref.name, generated: false }
    : { namespace: keyNamespace, name: `${zone.metadata.name}-dnssec`, generated: true };
}

/** The Secrets a DNSZone's reconcile reads: its key while signed, its TSIG key while it has a transfer. */
export function secretsNamedBy(zone: DNSZone, keyNamespace: string): SecretRef[] {
  const refs: SecretRef[] = [];
  if (zone.spec.dnssec?.enabled) {
    const { namespace, name } = keySecretOf(zone, keyNamespace);
    refs.push({ namespace, name });
  }
  const tsig = zone.spec.transfer?.tsigSecretRef;
  if (tsig) refs.push({ namespace: tsig.namespace, name: tsig.name });
  return refs;
}

/** `namespace/name`: a Secret's key in maps and logs. */
export function secretKey(ref: SecretRef): string {
  return `${ref.namespace}/${ref.name}`;
}

/** Every Secret the DNSZones name, once each, by secretKey. */
export function secretsNamedByAll(zones: readonly DNSZone[], keyNamespace: string): Map<string, SecretRef> {
  const all = new Map<string, SecretRef>();
  for (const zone of zones)
    for (const ref of secretsNamedBy(zone, keyNamespace)) all.set(secretKey(ref), ref);
  return all;
}

/** The names of the DNSZones that name the Secret. */
export function zonesNaming(zones: readonly DNSZone[], secret: SecretRef, keyNamespace: string): string[] {
  const key = secretKey(secret);
  return zones
    .filter((zone) => secretsNamedBy(zone, keyNamespace).some((ref) => secretKey(ref) === key))
    .map((zone) => zone.metadata.name);
}
