// The one question every controller asks before it acts for a management
// namespace (ADR 0207): does this replica serve it now? A namespace is the
// unit because everything the operator reads and writes for a GatewayDNS, a
// ClusterSet or a Corefile stays within one namespace's Clusters; only the
// claims of custom host names look across namespaces (gatewaydns/claims/claims.ts).

export interface Share {
  /** This replica may act for the namespace now: connect to its Clusters, write for them, write their status. */
  owns(namespace: string): boolean;
  /** Called when this replica gains (held) or loses namespaces; `affected` says which. */
  onChange(listener: (affected: (namespace: string) => boolean, held: boolean) => void): void;
}

/** A single replica (or the leader of several): it serves every namespace, always. */
export const WHOLE_FLEET: Share = {
  owns: () => true,
  onChange: () => undefined,
};
