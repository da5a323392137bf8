// The Corefile as it should be (pure): one managed forward block per zone to
// the dns-server while the cluster is wired (a target), none otherwise; the
// clusterset zone's block only where the cluster is a ClusterSet member.
import { ensureForwardBlock, removeForwardBlock } from './forward-block.js';

export interface CorefilePlanInput {
  corefile: string;
  /** Where CoreDNS sends the zones; undefined: the cluster is not wired (no dns-server, opted out, clean-up). */
  target?: string;
  /** The zones forwarded to the dns-server, each in a managed block of its own: the suffix first. */
  zones: readonly string[];
  /** Every clusterset zone this operator may have forwarded: what is removed where none is wanted. */
  clustersetZones: readonly string[];
  /** The clusterset zone of this cluster's ClusterSet, if it is a member. */
  clustersetZone?: string;
}

export interface CorefilePlan {
  corefile: string;
  changed: boolean;
  /** The target forwarded to, when wired. */
  forwards?: string;
  /** The zones forwarded, the clusterset one last. */
  forwardedZones: string[];
}

/** Throws CorefileError for a Corefile the transform cannot edit safely. */
export function planCorefile(input: CorefilePlanInput): CorefilePlan {
  const { target } = input;
  const clustersetZone = target !== undefined ? input.clustersetZone : undefined;
  const blocks = [
    ...input.zones.map((zone) => ({ zone, forward: target !== undefined })),
    // The clusterset zone: its own managed block, to the same dns-server, in ClusterSet members only.
    ...input.clustersetZones.map((zone) => ({ zone, forward: zone === clustersetZone })),
  ];
  let next = { corefile: input.corefile, changed: false };
  for (const { zone, forward } of blocks) {
    const step =
      forward && target !== undefined
        ? ensureForwardBlock(next.corefile, zone, [target])
        : removeForwardBlock(next.corefile, zone);
    next = { corefile: step.corefile, changed: next.changed || step.changed };
  }
  return {
    ...next,
    forwards: target,
    forwardedZones: target !== undefined ? [...input.zones, ...(clustersetZone ? [clustersetZone] : [])] : [],
  };
}
