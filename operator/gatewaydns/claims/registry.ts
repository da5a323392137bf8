// Who may have which name: the one place that decides, for a GatewayDNS being
// reconciled, which of its generated names an older GatewayDNS of its
// namespace already claims, which custom host names (spec.hostnames, the fqdn
// annotation) it may serve against every older claim, and whether it must
// wait for older claims not read yet after a start. It remembers each
// GatewayDNS's claims (claims.ts) and, when what one claims changes, requeues
// the others asking for the same names: a name can move between namespaces,
// which no informer event of theirs would tell them.
import type { GatewayDNS } from '../../../api/index.js';
import type { Logger } from '../../manager/runtime/log.js';
import { objectKey } from '../../manager/runtime/workqueue.js';
import type { ClusterFacts } from '../../model/facts.js';
import type { matchesSelector } from '../../model/selector.js';
import { validateGatewayDnsSpec, type EffectiveSpec } from '../../model/validate.js';
import { HostnameClaims, claimantsOf } from './claims.js';
import { claimedDomains, conflictsFor, type Claim, type ConflictResult } from './conflicts.js';
import {
  claimedNames,
  customHostnames,
  olderThan,
  type AnnotatedHostname,
  type Delegations,
  type HostnameClaim,
  type HostnameResult,
} from './hostnames.js';

export interface ClaimsRegistryOptions {
  domainSuffix: string;
  /** Further zones the dns-servers serve, where custom host names may be too. */
  otherZones?: readonly string[];
  /** Cached GatewayDNS of a namespace ('' for every namespace). */
  listGatewayDns: (namespace: string) => readonly GatewayDNS[];
  getGatewayDns: (namespace: string, name: string) => GatewayDNS | undefined;
  /** The Clusters of `namespace` a selector matches, by name. */
  selectedClusters: (namespace: string, selector: Parameters<typeof matchesSelector>[0]) => string[];
  /** The DNSZones in force and the namespaces' labels: who may use a custom name (ADR 0213). */
  delegations?: () => Delegations;
  /** Whether this replica serves the management namespace (ADR 0207). */
  serves: (namespace: string) => boolean;
  /** Reconcile these GatewayDNS again: a name they ask for was taken or freed, or their wait ended. */
  requeue: (keys: string[]) => void;
  /**
   * After a start, how long a GatewayDNS asking for custom host names waits for every older one's
   * claims to be read before it writes without them (one that keeps failing must not hold it forever).
   */
  startupGraceMs?: number;
}

/** What the registry decided for one GatewayDNS. */
export type NamesDecision =
  | {
      held: false;
      /** Its generated names against the older claims of its namespace. */
      conflict: ConflictResult;
      /** Its custom host names against every older claim. */
      hostnames: HostnameResult;
    }
  /** Right after a start: older GatewayDNS whose claims are not read yet may hold one of its names. */
  | { held: true; waitingFor: string[] };

export class ClaimsRegistry {
  /** The custom host names each GatewayDNS claims, annotations included, as its last reconcile read them. */
  private readonly claims = new HostnameClaims();
  /** GatewayDNS whose writes wait for older ones' claims to be read (after a start). */
  private readonly held = new Set<string>();
  private readonly startedAt = Date.now();
  private graceTimer?: NodeJS.Timeout;

  constructor(private readonly opts: ClaimsRegistryOptions) {}

  /**
   * Records what `gw` claims now (its spec.hostnames and the annotations its selected clusters'
   * Services carry) and decides which names it may have.
   */
  decide(
    gw: GatewayDNS,
    spec: EffectiveSpec,
    selected: string[],
    facts: ClusterFacts[],
    log: Logger,
  ): NamesDecision {
    const key = objectKey(gw);
    const conflict = conflictsFor(this.claimOf(gw, selected), this.otherClaims(gw));
    const claim = hostnameClaimOf(gw, spec.hostnames, annotatedClaims(spec, facts));
    this.changed(key, this.claims.set(key, claim));
    const unread = claimedNames(claim).length ? this.olderClaimsUnread(gw, claim) : [];
    if (unread.length && Date.now() - this.startedAt < this.startupGraceMs()) {
      // Right after a start: an older GatewayDNS not reconciled yet may hold one of these names
      // through its Service's annotation. Writing now could publish a name it then gives up, and
      // rewrite the set a moment later; its first reconcile releases this one (releaseHeld).
      this.hold(key, unread, log);
      return { held: true, waitingFor: unread };
    }
    this.held.delete(key);
    return {
      held: false,
      conflict,
      hostnames: customHostnames(
        claim,
        this.opts.domainSuffix,
        this.hostnameClaims(key),
        this.opts.otherZones,
        this.opts.delegations?.(),
      ),
    };
  }

  /** Invalid or being deleted: it claims nothing, and its names are free for the others from now. */
  drop(key: string): void {
    this.held.delete(key);
    this.changed(key, this.claims.drop(key));
  }

  /** Gone, or another replica's: nothing of it is kept. */
  forget(key: string): void {
    this.held.delete(key);
    this.changed(key, this.claims.forget(key));
  }

  private startupGraceMs(): number {
    return this.opts.startupGraceMs ?? 30_000;
  }

  private claimOf(gw: GatewayDNS, selected: string[]): Claim {
    const spec = validatedSpec(gw.spec);
    return {
      name: gw.metadata.name,
      createdAt: new Date(gw.metadata.creationTimestamp ?? 0).toISOString(),
      domains: spec.valid
        ? claimedDomains(gw.metadata.namespace ?? '', spec.spec, selected, this.opts.domainSuffix)
        : [],
    };
  }

  private otherClaims(gw: GatewayDNS): Claim[] {
    const namespace = gw.metadata.namespace ?? '';
    return this.opts
      .listGatewayDns(namespace)
      .filter((o) => o.metadata.name !== gw.metadata.name && !o.metadata.deletionTimestamp)
      .map((o) => {
        const spec = validatedSpec(o.spec);
        return this.claimOf(
          o,
          spec.valid ? this.opts.selectedClusters(namespace, spec.spec.clusterSelector) : [],
        );
      });
  }

  /**
   * The custom host names of every other GatewayDNS the operator sees, in any namespace (custom
   * names are not per team): spec.hostnames from the informer, annotations as their last reconcile
   * read them.
   */
  private hostnameClaims(self: string): HostnameClaim[] {
    return this.opts
      .listGatewayDns('')
      .filter((o) => objectKey(o) !== self && !o.metadata.deletionTimestamp)
      .flatMap((o) => {
        const spec = validatedSpec(o.spec);
        if (!spec.valid) return [];
        const annotated = this.claims.annotatedOf(objectKey(o));
        return spec.spec.hostnames.length || annotated.length
          ? [hostnameClaimOf(o, spec.spec.hostnames, annotated)]
          : [];
      });
  }

  /** The valid, older GatewayDNS (any namespace) whose claims this process has not read yet. */
  private olderClaimsUnread(gw: GatewayDNS, self: HostnameClaim): string[] {
    return (
      this.opts
        .listGatewayDns('')
        // Another replica's GatewayDNS are read there: waiting for them here would wait for nothing.
        .filter(
          (o) =>
            !o.metadata.deletionTimestamp &&
            validatedSpec(o.spec).valid &&
            this.opts.serves(o.metadata.namespace ?? ''),
        )
        .map((o) => hostnameClaimOf(o, [], []))
        .filter(
          (o) => o.gatewayDns !== self.gatewayDns && olderThan(o, self) && !this.claims.hasRead(o.gatewayDns),
        )
        .map((o) => o.gatewayDns)
    );
  }

  private hold(key: string, unread: string[], log: Logger): void {
    if (!this.held.has(key))
      log.info('record sets held until older GatewayDNS claims are read', {
        waitingFor: unread.slice(0, 5),
        more: Math.max(0, unread.length - 5),
      });
    this.held.add(key);
    // Whatever happens to the older ones, the grace ends: the held ones are reconciled then.
    this.graceTimer ??= setTimeout(
      () => this.opts.requeue([...this.held]),
      Math.max(0, this.startedAt + this.startupGraceMs() - Date.now()) + 10,
    );
    this.graceTimer.unref();
  }

  /** A GatewayDNS's claims were just read: the held ones with nothing older left unread go ahead. */
  private releaseHeld(): void {
    if (!this.held.size) return;
    const ready = [...this.held].filter((key) => {
      const [namespace = '', name = ''] = key.split('/');
      const held = this.opts.getGatewayDns(namespace, name);
      return !held || !this.olderClaimsUnread(held, hostnameClaimOf(held, [], [])).length;
    });
    for (const key of ready) this.held.delete(key);
    if (ready.length) this.opts.requeue(ready);
  }

  /** `key` took or let go of `names`: the others asking for any of them must look again. */
  private changed(key: string, names: string[]): void {
    this.releaseHeld();
    if (!names.length) return;
    const keys = claimantsOf(key, names, this.hostnameClaims(key));
    if (keys.length) this.opts.requeue(keys);
  }
}

/**
 * Every reconcile weighs the claims of the other GatewayDNS, which means their validated specs.
 * The informer replaces an object (and so its spec) on every update, so a spec object seen before
 * is unchanged: validated once per version, as an index kept by the informer would, not once per pass.
 */
const validations = new WeakMap<object, ReturnType<typeof validateGatewayDnsSpec>>();
export function validatedSpec(raw: unknown): ReturnType<typeof validateGatewayDnsSpec> {
  if (typeof raw !== 'object' || raw === null) return validateGatewayDnsSpec(raw);
  let v = validations.get(raw);
  if (!v) {
    v = validateGatewayDnsSpec(raw);
    validations.set(raw, v);
  }
  return v;
}

function hostnameClaimOf(gw: GatewayDNS, hostnames: string[], annotated: AnnotatedHostname[]): HostnameClaim {
  return {
    gatewayDns: objectKey(gw),
    createdAt: new Date(gw.metadata.creationTimestamp ?? 0).toISOString(),
    hostnames,
    ...(annotated.length ? { annotated } : {}),
  };
}

/**
 * The names each selected cluster asks for beyond spec.hostnames, each once, with where it was read:
 * the fqdn annotation of its Service, or the routes its Gateway accepted.
 */
function annotatedClaims(spec: EffectiveSpec, facts: ClusterFacts[]): AnnotatedHostname[] {
  const seen = new Map<string, AnnotatedHostname>();
  for (const f of facts) {
    for (const name of f.annotatedHostnames ?? [])
      if (!seen.has(name))
        seen.set(name, {
          name,
          from: `Service ${spec.serviceNamespace}/${spec.serviceName} in cluster ${f.cluster}`,
        });
    for (const { name, route } of f.routeHostnames ?? [])
      if (!seen.has(name)) seen.set(name, { name, from: `${route} in cluster ${f.cluster}` });
  }
  return [...seen.values()];
}
