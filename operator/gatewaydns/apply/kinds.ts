// What the apply step keeps in workload clusters: our DNSRecordSets.
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  CONTROLLER_NAME,
  DNSRECORDSET_PLURAL,
  GROUP,
  MANAGED_BY_LABEL,
  VERSION,
  type DNSRecordSet,
} from '../../../api/index.js';
import { customResourceType } from '../../manager/clusters/resource.js';

/** The DNSRecordSets this operator manages. */
export const DNS_RECORD_SETS = customResourceType<DNSRecordSet & KubernetesObject>({
  kind: 'DNSRecordSet',
  group: GROUP,
  version: VERSION,
  plural: DNSRECORDSET_PLURAL,
  labelSelector: `${MANAGED_BY_LABEL}=${CONTROLLER_NAME}`,
});
