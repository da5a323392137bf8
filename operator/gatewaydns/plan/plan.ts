// Desire, pure: from a GatewayDNS, what was observed of its clusters and the
// names the claims registry gave it, the record sets each receiving cluster
// must hold. external-dns's plan step: nothing here reads or writes.
import type { ClusterFacts } from '../../model/facts.js';
import type { EffectiveSpec } from '../../model/validate.js';
import type { ConflictResult } from '../claims/conflicts.js';
import { recordSetsOf, shardViews } from './desired.js';
import type { HostnameResult } from '../claims/hostnames.js';
import { fitRecordSets, type Omission } from './limits.js';
import { desiredRecordSet, type DesiredRecordSet } from './desired-record-set.js';

export interface PlanInput {
  namespace: string;
  name: string;
  spec: EffectiveSpec;
  domainSuffix: string;
  recordsNamespace: string;
  /** What each selected cluster says of the Service (frozen ones as last published). */
  facts: ClusterFacts[];
  conflict: ConflictResult;
  hostnames: HostnameResult;
  /** Every receiving cluster that is written to (frozen ones are left as they are). */
  receivingClusters: string[];
  /** Each selected Cluster's labels, for the traffic policy's tiers and weights. */
  clusterLabels?: ReadonlyMap<string, Record<string, string> | undefined>;
}

export interface RecordSetPlan {
  /** What the record sets left out to stay within DNS and etcd limits (the shared view). */
  omitted: Omission[];
  /** The record sets each receiving cluster gets. */
  setsByCluster: Map<string, DesiredRecordSet[]>;
}

/**
 * One desired set per source cluster, the same for every receiving cluster, or with answer
 * localFirst computed per receiving cluster; the writer compares before it writes, so a change
 * costs one write per cluster whose shard it alters, and nothing when nothing changed.
 */
export function planRecordSets(input: PlanInput): RecordSetPlan {
  const { namespace, name, spec } = input;
  const views = shardViews({
    namespace,
    name,
    spec,
    suffix: input.domainSuffix,
    facts: input.facts,
    excludedDomains: input.conflict.lostDomains,
    hostnames: input.hostnames.served,
    clusterLabels: input.clusterLabels,
  });
  // Receiving clusters that see the same view share one computation (with answer all: every one).
  const byView = new Map<string, { sets: DesiredRecordSet[]; omitted: Omission[] }>();
  const setsFor = (receivingCluster?: string) => {
    const view = views.viewOf(receivingCluster);
    let desired = byView.get(view);
    if (!desired) {
      const fitted = fitRecordSets(
        recordSetsOf({ namespace, name }, views.shards(receivingCluster), input.recordsNamespace),
      );
      desired = { sets: fitted.sets.map(desiredRecordSet), omitted: fitted.omitted };
      byView.set(view, desired);
    }
    return desired;
  };
  const shared = setsFor();
  // A set that would answer no name is not written (fitRecordSets leaves it out), and one written
  // earlier that no longer answers anything is withdrawn by the writer. With localFirst every
  // receiving cluster's sets hold the per-cluster names, so they serve exactly when the shared ones do.
  const perCluster = spec.answer === 'localFirst' && shared.sets.length > 0;
  return {
    omitted: shared.omitted,
    setsByCluster: new Map(
      input.receivingClusters.map((c) => [c, perCluster ? setsFor(c).sets : shared.sets] as const),
    ),
  };
}
