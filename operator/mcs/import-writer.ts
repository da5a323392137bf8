// Apply: one member cluster's objects of one import (the ServiceImport and its
// status, the derived Service holding the ClusterSet IP, the MCS
// EndpointSlices) as planned, or none of ours, through the operator's one
// owned-object writer.
import type { KubernetesObject, V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { SERVICEIMPORT_PLURAL } from '../../api/index.js';
import { NAMESPACES } from '../manager/clusters/kinds.js';
import type { OwnedObjectWriter } from '../manager/clusters/owned-writer.js';
import type { RemoteCluster } from '../manager/clusters/remote.js';
import type { ImportDesired } from './desired.js';
import { DERIVED_SERVICES, MCS_ENDPOINT_SLICES, SERVICE_IMPORTS } from './kinds.js';
import {
  allocatedIps,
  derivedServiceContent,
  derivedServiceName,
  derivedServiceObject,
  isOurs,
  serviceImportContent,
  serviceImportObject,
  serviceImportStatus,
  sliceContent,
  sliceObjects,
  type ServiceImportObject,
} from './objects.js';
import type { McsStatusPatcher } from './status-patcher.js';

export class ImportWriter {
  constructor(
    private readonly opts: {
      writer: OwnedObjectWriter;
      status: McsStatusPatcher;
      firstSyncTimeoutMs?: number;
    },
  ) {}

  /** One cluster: the import's objects as planned, or none of ours. Returns how many writes it made. */
  async applyTo(
    remote: RemoteCluster,
    namespace: string,
    name: string,
    desired: ImportDesired | undefined,
  ): Promise<number> {
    const timeout = this.opts.firstSyncTimeoutMs ?? 5_000;
    const imports = remote.informer(SERVICE_IMPORTS);
    const derived = remote.informer(DERIVED_SERVICES);
    const mcsSlices = remote.informer(MCS_ENDPOINT_SLICES);
    const namespaces = remote.informer(NAMESPACES);
    const why = await remote.synced([imports, derived, mcsSlices, namespaces], timeout);
    if (why) throw new Error(`cluster ${remote.key} not read: ${why}`);
    // Namespace sameness: a cluster without the namespace gets nothing there.
    const want = desired && namespaces.get(namespace) ? desired : undefined;
    const writer = this.opts.writer;
    let written = 0;

    const existingDerived = derived.get(derivedServiceName(name), namespace) as V1Service | undefined;
    let ips: { ips: string[]; ipFamilies: string[] } | undefined;
    if (want?.spec.type === 'ClusterSetIP') {
      const object = derivedServiceObject(namespace, name, want);
      const r = await writer.ensure(remote, existingDerived, {
        object,
        content: derivedServiceContent(object),
        contentOf: derivedServiceContent,
      });
      if (r.changed) written++;
      ips = allocatedIps((r.applied as V1Service | undefined) ?? existingDerived);
    } else if (existingDerived && isOurs(existingDerived, name)) {
      if (await writer.delete(remote, refOf('v1', 'Service', existingDerived))) written++;
    }

    const existingImport = imports.get(name, namespace) as ServiceImportObject | undefined;
    if (want) {
      const object = serviceImportObject(namespace, name, want, ips);
      const r = await writer.ensure(remote, existingImport, {
        object,
        content: serviceImportContent(object),
        contentOf: serviceImportContent,
      });
      if (r.changed) written++;
      const current = (r.applied as ServiceImportObject | undefined) ?? existingImport;
      if (await this.writeImportStatus(remote, current, want)) written++;
    } else if (existingImport && isOurs(existingImport, name)) {
      if (
        await writer.delete(remote, refOf('multicluster.x-k8s.io/v1beta1', 'ServiceImport', existingImport))
      )
        written++;
    }

    const present = new Map(
      (mcsSlices.list(namespace) as V1EndpointSlice[])
        .filter((s) => isOurs(s as KubernetesObject, name))
        .map((s) => [s.metadata?.name ?? '', s]),
    );
    const wanted = want ? sliceObjects(namespace, name, want) : [];
    for (const object of wanted) {
      const existing = present.get(object.metadata?.name ?? '');
      present.delete(object.metadata?.name ?? '');
      if (
        (
          await writer.ensure(remote, existing, {
            object,
            content: sliceContent(object),
            contentOf: sliceContent,
          })
        ).changed
      )
        written++;
    }
    for (const stale of present.values())
      if (await writer.delete(remote, refOf('discovery.k8s.io/v1', 'EndpointSlice', stale))) written++;
    return written;
  }

  /**
   * status.clusters and SourcesReachable, through the status subresource (the spec's apply leaves
   * status alone), only when they differ from what the object has.
   */
  private async writeImportStatus(
    remote: RemoteCluster,
    current: ServiceImportObject | undefined,
    desired: ImportDesired,
  ): Promise<boolean> {
    if (!current) return false;
    const status = serviceImportStatus(desired, current.status, current.metadata?.generation, new Date());
    if (!status) return false;
    await this.opts.status.patch(remote, SERVICEIMPORT_PLURAL, current, status);
    return true;
  }
}

function refOf(apiVersion: string, kind: string, o: KubernetesObject) {
  return {
    apiVersion,
    kind,
    namespace: o.metadata?.namespace ?? '',
    name: o.metadata?.name ?? '',
    uid: o.metadata?.uid,
  };
}
