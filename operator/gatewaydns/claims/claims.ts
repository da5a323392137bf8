// The custom host names each GatewayDNS claims, as its last reconcile read
// them. The fqdn annotations live on Services in the workload clusters, which
// only a GatewayDNS's own reconcile reads; the others weigh them against
// their own names from here, as they weigh spec.hostnames. When what one
// claims changes, the others asking for a name it took or let go must be
// reconciled again: a name can move between namespaces, which no informer
// event of theirs would tell them.
import { claimedNames, type AnnotatedHostname, type HostnameClaim } from './hostnames.js';

type Claimed = Pick<HostnameClaim, 'hostnames' | 'annotated'>;

export class HostnameClaims {
  private readonly byGatewayDns = new Map<string, { names: string[]; annotated: AnnotatedHostname[] }>();
  /** Every GatewayDNS whose claims this process has read (set or dropped) at least once. */
  private readonly read = new Set<string>();

  /** `key` claims `claim` now; returns the names it took or let go since the last call. */
  set(key: string, claim: Claimed): string[] {
    this.read.add(key);
    const before = this.byGatewayDns.get(key)?.names ?? [];
    const names = claimedNames(claim);
    if (names.length) this.byGatewayDns.set(key, { names, annotated: claim.annotated ?? [] });
    else this.byGatewayDns.delete(key);
    return symmetricDifference(before, names);
  }

  /** `key` is invalid or being deleted: it claims nothing. */
  drop(key: string): string[] {
    return this.set(key, { hostnames: [] });
  }

  /** `key` is gone: it claims nothing, and nothing of it is kept. */
  forget(key: string): string[] {
    const letGo = this.drop(key);
    this.read.delete(key);
    return letGo;
  }

  /**
   * Whether `key`'s claims are known: after a restart, a GatewayDNS not reconciled yet may hold a
   * name through an annotation that nothing else says.
   */
  hasRead(key: string): boolean {
    return this.read.has(key);
  }

  /** The names `key`'s Services claimed through the annotation when it was last reconciled. */
  annotatedOf(key: string): AnnotatedHostname[] {
    return this.byGatewayDns.get(key)?.annotated ?? [];
  }
}

/** Pure: the GatewayDNS, other than `self`, that ask for any of `names`. */
export function claimantsOf(self: string, names: string[], claims: HostnameClaim[]): string[] {
  if (!names.length) return [];
  const wanted = new Set(names);
  return claims
    .filter((c) => c.gatewayDns !== self && claimedNames(c).some((n) => wanted.has(n)))
    .map((c) => c.gatewayDns)
    .sort();
}

function symmetricDifference(a: string[], b: string[]): string[] {
  const inA = new Set(a);
  const inB = new Set(b);
  return [...a.filter((n) => !inB.has(n)), ...b.filter((n) => !inA.has(n))].sort();
}
