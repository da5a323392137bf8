// Which replica serves which clusters (ADR 0207), pure: a management namespace
// (and so its Clusters, its GatewayDNS, its ClusterSet) belongs to a shard by a
// hash of its name, fixed for the fleet's life; a shard
// belongs to the live member with the highest hash of (member, shard):
// rendezvous hashing, so every replica computes the same assignment from the
// same member list, a member joining takes only the shards it now wins (about
// S / members), and a member leaving hands on only its own.

/** FNV-1a over the UTF-8 bytes, then murmur3's finaliser: short keys that differ in one character land far apart. */
export function hash32(key: string): number {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(key, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The shard of a management namespace: of every Cluster, GatewayDNS and ClusterSet in it. */
export function shardOfNamespace(namespace: string, shards: number): number {
  return hash32(namespace) % shards;
}

/** The member that serves a shard: undefined only when there is none. Ties go to the smaller name. */
export function ownerOf(shard: number, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = -1;
  for (const member of members) {
    const score = hash32(`${member}#${shard}`);
    if (score > bestScore || (score === bestScore && best !== undefined && member < best)) {
      best = member;
      bestScore = score;
    }
  }
  return best;
}

/** The shards (ascending) a member serves among `members`. */
export function shardsOf(member: string, members: readonly string[], shards: number): number[] {
  const out: number[] = [];
  for (let shard = 0; shard < shards; shard++) if (ownerOf(shard, members) === member) out.push(shard);
  return out;
}
