// What the MCS controller's queue holds: an exported or imported Service of a
// ClusterSet, or a member cluster's identity (its ClusterProperties).

/** One multi-cluster Service: a Service name exported or imported in the ClusterSet of a management namespace. */
export interface ServiceKey {
  /** The management namespace whose Clusters are the ClusterSet. */
  managementNamespace: string;
  namespace: string;
  name: string;
}

export type McsKey =
  ({ kind: 'service' } & ServiceKey) | { kind: 'member'; managementNamespace: string; cluster: string };

/** The id of a ServiceKey in maps and watch holds. */
export function serviceKeyId(key: ServiceKey): string {
  return `${key.managementNamespace}|${key.namespace}|${key.name}`;
}

export function parseServiceKeyId(id: string): ServiceKey {
  const [managementNamespace = '', namespace = '', name = ''] = id.split('|');
  return { managementNamespace, namespace, name };
}

/** The id of a queue key: one reconcile at a time per id. */
export function mcsKeyId(key: McsKey): string {
  return key.kind === 'member'
    ? `member|${key.managementNamespace}|${key.cluster}`
    : `service|${serviceKeyId(key)}`;
}

export function serviceKey(managementNamespace: string, namespace: string, name: string): McsKey {
  return { kind: 'service', managementNamespace, namespace, name };
}
