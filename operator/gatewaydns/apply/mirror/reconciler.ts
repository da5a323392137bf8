// The mirror part of one GatewayDNS reconcile: reads what each selected
// cluster has (from the watches the GatewayDNS's own reading has synced),
// keeps the last known share of a source cluster that does not answer,
// withdraws mirrors the spec no longer asks for (another namespace or name,
// or no mirror at all), and has the writer bring every workload cluster of
// the namespace in line.
import type { V1Service } from '@kubernetes/client-node';
import type { GatewayDNS } from '../../../../api/index.js';
import type { ClusterCache } from '../../../manager/clusters/cache.js';
import type { OwnedObjectWriter } from '../../../manager/clusters/owned-writer.js';
import type { ClusterFacts } from '../../../model/facts.js';
import { RESOLUTION_TYPES } from '../../../model/resolution-types.js';
import type { EffectiveSpec } from '../../../model/validate.js';
import { desiredMirror, type MirrorTarget } from './desired.js';
import { observeMirrorSource, type MirrorSource } from './observe.js';
import { ownershipOf } from './ownership.js';
import type { MirrorResult } from './status.js';
import { MirrorWriter, type MirrorOutcome } from './writer.js';

export interface MirrorReconcilerOptions {
  clusters: ClusterCache;
  writer: OwnedObjectWriter;
  firstSyncTimeoutMs: number;
  requestTimeoutMs: number;
}

export interface MirrorInput {
  gw: GatewayDNS;
  spec: EffectiveSpec;
  /** Selected (source) clusters, and every workload cluster of the namespace (the possible consumers). */
  selected: string[];
  targets: string[];
  /** The GatewayDNS's reading of each selected cluster: whether it answered. */
  facts: ClusterFacts[];
}

export interface MirrorReconcileResult {
  /** undefined when spec.mirror is not set. */
  result?: MirrorResult;
  writes: number;
  /** Why the reconcile must be retried: a write refused, or an earlier mirror not yet withdrawn. */
  retry?: string;
}

export class MirrorReconciler {
  private readonly writer: MirrorWriter;
  /** The last share of each source cluster, per GatewayDNS: what stays while it does not answer. */
  private readonly lastKnown = new Map<string, MirrorSource>();
  /** Mirror Services ("namespace/name") this process has kept per GatewayDNS, beside those in status. */
  private readonly kept = new Map<string, Set<string>>();

  constructor(private readonly opts: MirrorReconcilerOptions) {
    this.writer = new MirrorWriter(opts);
  }

  async reconcile(input: MirrorInput): Promise<MirrorReconcileResult> {
    const { gw, spec } = input;
    const namespace = gw.metadata.namespace ?? '';
    const key = `${namespace}/${gw.metadata.name}`;
    const target = spec.mirror ? mirrorTarget(gw, spec) : undefined;
    const service = target ? `${target.namespace}/${target.name}` : undefined;
    const withdrawal = await this.withdrawOthers(gw, input.targets, service);
    const notWithdrawn = withdrawal.failed.map((o) => `${o.cluster} ${o.service} (${o.message})`);
    const pending = notWithdrawn.length
      ? `earlier mirror not withdrawn from ${notWithdrawn.join(', ')}`
      : undefined;
    let writes = withdrawal.writes;
    if (!target || !service) return { writes, ...(pending ? { retry: pending } : {}) };

    const sources: MirrorSource[] = [];
    const keptSlices: string[] = [];
    const unreachableSources: string[] = [];
    for (const cluster of input.selected) {
      const memoryKey = `${key}|${cluster}`;
      const fact = input.facts.find((f) => f.cluster === cluster);
      if (!fact || fact.state === 'Unreachable') {
        unreachableSources.push(cluster);
        const last = this.lastKnown.get(memoryKey);
        if (last) sources.push(last);
        // After a restart nothing is remembered: that cluster's slices stay as they are in every consumer.
        else keptSlices.push(cluster);
        continue;
      }
      const source = this.observe(cluster, spec, fact);
      if (source) {
        sources.push(source);
        this.lastKnown.set(memoryKey, source);
      } else this.lastKnown.delete(memoryKey);
    }
    const plan = desiredMirror(target, sources);
    const isSource = (c: string) =>
      input.selected.includes(c) &&
      target.namespace === spec.serviceNamespace &&
      target.name === spec.serviceName;
    const outcomes = await Promise.all(
      input.targets.map(async (c): Promise<MirrorOutcome> => {
        if (!isSource(c)) return this.writer.apply(namespace, c, target, plan, keptSlices);
        // The Service itself lives here under the mirror's name: ours, if any from before, goes.
        const removed = await this.writer.remove(namespace, c, target);
        if (removed.state === 'Unreachable' || removed.state === 'Failed') return removed;
        return {
          ...removed,
          state: 'SourceCluster',
          message: `a selected cluster: ${service} is the source Service itself`,
        };
      }),
    );
    writes += outcomes.reduce((n, o) => n + o.writes, 0);
    const failed = outcomes.filter((o) => o.state === 'Failed').map((o) => `${o.cluster} (${o.message})`);
    const retry = [
      ...(pending ? [pending] : []),
      ...(failed.length ? [`mirror not written to ${failed.join(', ')}`] : []),
    ];
    return {
      result: { service, outcomes, unreachableSources },
      writes,
      ...(retry.length ? { retry: retry.join('; ') } : {}),
    };
  }

  /** The GatewayDNS is being deleted: every mirror it has, in every cluster. */
  async withdraw(
    gw: GatewayDNS,
    spec: EffectiveSpec | undefined,
    targets: string[],
  ): Promise<MirrorOutcome[]> {
    const key = `${gw.metadata.namespace ?? ''}/${gw.metadata.name}`;
    const current = spec?.mirror ? mirrorTarget(gw, spec) : undefined;
    const all = new Set([
      ...this.previousServices(gw),
      ...(current ? [`${current.namespace}/${current.name}`] : []),
    ]);
    const outcomes = (
      await Promise.all(
        [...all].map((s) =>
          Promise.all(
            targets.map((c) => this.writer.remove(gw.metadata.namespace ?? '', c, targetFor(gw, s))),
          ),
        ),
      )
    ).flat();
    this.forget(key);
    return outcomes;
  }

  /**
   * Namespaces of the mirror Services this GatewayDNS keeps or still has to
   * withdraw: the writer reads them in every workload cluster.
   */
  namespacesInUse(gw: GatewayDNS, spec: EffectiveSpec | undefined): string[] {
    const current = spec?.mirror ? [mirrorTarget(gw, spec).namespace] : [];
    const previous = this.previousServices(gw).map((s) => s.split('/')[0] ?? '');
    return [...new Set([...current, ...previous])].sort();
  }

  forget(key: string): void {
    this.kept.delete(key);
    for (const k of this.lastKnown.keys()) if (k.startsWith(`${key}|`)) this.lastKnown.delete(k);
  }

  /** Mirrors of earlier specs (from status and from memory) that are not `current`: withdrawn everywhere. */
  private async withdrawOthers(
    gw: GatewayDNS,
    targets: string[],
    current: string | undefined,
  ): Promise<{ writes: number; failed: MirrorOutcome[] }> {
    const key = `${gw.metadata.namespace ?? ''}/${gw.metadata.name}`;
    const old = this.previousServices(gw).filter((s) => s !== current);
    const outcomes = await Promise.all(
      old.flatMap((s) =>
        targets.map((c) => this.writer.remove(gw.metadata.namespace ?? '', c, targetFor(gw, s))),
      ),
    );
    const failed = outcomes.filter((o) => o.state === 'Unreachable' || o.state === 'Failed');
    // Remembered until withdrawn everywhere, so that the next reconcile tries again.
    const kept = new Set([...(current ? [current] : []), ...failed.map((o) => o.service)]);
    if (kept.size) this.kept.set(key, kept);
    else this.kept.delete(key);
    return { writes: outcomes.reduce((n, o) => n + o.writes, 0), failed };
  }

  private previousServices(gw: GatewayDNS): string[] {
    const key = `${gw.metadata.namespace ?? ''}/${gw.metadata.name}`;
    return [
      ...new Set([...(gw.status?.mirrors ?? []).map((m) => m.service), ...(this.kept.get(key) ?? [])]),
    ].sort();
  }

  /** The source's share, from the observation the record sets were computed from (no second read). */
  private observe(cluster: string, spec: EffectiveSpec, fact: ClusterFacts): MirrorSource | undefined {
    if (!fact.observed) return undefined;
    const type = RESOLUTION_TYPES[spec.resolutionType];
    return observeMirrorSource(
      cluster,
      fact.observed.service,
      type.headless ? fact.observed.slices : [],
      type.nodePorts ? fact.observed.nodes : [],
      {
        resolutionType: spec.resolutionType,
        nodeAddressTypes: spec.nodeAddressTypes,
        clusterReady: fact.state === 'Ready',
      },
    );
  }
}

/** A mirror is never a source: a cluster that consumed one and is then selected must not publish it. */
export function sourceService(service: V1Service | undefined): V1Service | undefined {
  if (!service) return undefined;
  const anyTarget: MirrorTarget = {
    gatewayDns: { namespace: '', name: '' },
    namespace: '',
    name: '',
    headless: false,
  };
  return ownershipOf(service, anyTarget).owner === 'foreign' ? service : undefined;
}

export function mirrorTarget(gw: GatewayDNS, spec: EffectiveSpec): MirrorTarget {
  return {
    gatewayDns: { namespace: gw.metadata.namespace ?? '', name: gw.metadata.name },
    namespace: spec.mirror?.namespace ?? spec.serviceNamespace,
    name: spec.mirror?.name ?? spec.serviceName,
    headless: RESOLUTION_TYPES[spec.resolutionType].headless,
  };
}

function targetFor(gw: GatewayDNS, service: string): MirrorTarget {
  const [namespace = '', name = ''] = service.split('/');
  return {
    gatewayDns: { namespace: gw.metadata.namespace ?? '', name: gw.metadata.name },
    namespace,
    name,
    headless: false,
  };
}
